#!/usr/bin/env bash
# systemd_units.sh SOURCE_DIR PAYOPS CALLBACKD: systemd-analyze verify accepts the units of the
# endpoint and the scheduled inspection with their shared drop-in. It needs the ExecStart
# binaries, the EnvironmentFile, the credential and the man pages that Documentation= names: a
# temporary copy of the units points at the built binaries and at copies of the other files.
source "$(dirname "$0")/lib.sh"
source_dir=$1 payops=$2 callbackd=$3
systemd="$source_dir/packaging/systemd"
units=(payops-callbackd.service payops-inspect.service payops-inspect.timer payops-.service.d/sandbox.conf)

mkdir -p "$scratch/etc" "$scratch/man/man1" "$scratch/man/man8" "$scratch/payops-.service.d"
cp "$source_dir/packaging/debian/callbackd.conf" "$scratch/etc/callbackd.conf"
cp "$source_dir/packaging/debian/inspect.conf" "$scratch/etc/inspect.conf"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$scratch/etc/callbackd.secret"
cp "$source_dir/packaging/man/payops.1" "$scratch/man/man1/"
cp "$source_dir/packaging/man/payops-callbackd.8" "$scratch/man/man8/"
for unit in "${units[@]}"; do
    sed -e "s|/usr/bin/payops-callbackd|$callbackd|g" -e "s|/usr/bin/payops |$payops |g" \
        -e "s|/etc/payops/|$scratch/etc/|g" "$systemd/$unit" >"$scratch/$unit"
done
grep -q "^ExecStart=$callbackd " "$scratch/payops-callbackd.service" || fail "the endpoint's ExecStart was not found"
grep -q "^ExecStart=$payops inspect" "$scratch/payops-inspect.service" || fail "the inspection's ExecStart was not found"
grep -q "^EnvironmentFile=$scratch/etc/" "$scratch/payops-.service.d/sandbox.conf" || fail "the settings file was not found"

# verify reads the drop-in folder beside the units it is given, as systemd does.
(cd "$scratch" && MANPATH="$scratch/man" run_silent_check systemd-analyze verify \
    ./payops-callbackd.service ./payops-inspect.service ./payops-inspect.timer)

# What the package promises of the sandbox, which both services get from the drop-in and
# neither overrides.
sandbox="$systemd/payops-.service.d/sandbox.conf"
for setting in NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes ProtectHome=yes PrivateDevices=yes \
    ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes ProtectControlGroups=yes \
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' RestrictNamespaces=yes LockPersonality=yes \
    MemoryDenyWriteExecute=yes SystemCallFilter=@system-service CapabilityBoundingSet= DynamicUser=yes \
    User=payops EnvironmentFile=/etc/payops/callbackd.conf; do
    grep -qxF "$setting" "$sandbox" || fail "the sandbox lacks $setting"
    for service in payops-callbackd.service payops-inspect.service; do
        # The inspection reads its own account after the shared settings (below).
        [[ $service == payops-inspect.service && $setting == EnvironmentFile=* ]] && continue
        if grep -q "^${setting%%=*}=" "$systemd/$service"; then fail "$service overrides ${setting%%=*}"; fi
    done
done
grep -qxF 'EnvironmentFile=-/etc/payops/inspect.conf' "$systemd/payops-inspect.service" ||
    fail "payops-inspect.service does not read its own account from /etc/payops/inspect.conf"

# The database password never on a command line: no unit passes --db or a DSN, and the settings
# files hand the DSN and its password to the services in their environment, root's only.
for unit in "${units[@]}"; do
    if grep -E '^ExecStart=.*(--db|mysql://|PASSWORD)' "$systemd/$unit"; then fail "$unit puts the DSN on a command line"; fi
done
for settings in callbackd.conf inspect.conf; do
    grep -qE '^#?PAYOPS_DB_PASSWORD=$' "$source_dir/packaging/debian/$settings" || fail "$settings has no PAYOPS_DB_PASSWORD"
done
service="$systemd/payops-callbackd.service"
for setting in Restart=on-failure 'LoadCredential=secret:/etc/payops/callbackd.secret' TimeoutStopSec=45 \
    ConditionFileNotEmpty=/etc/payops/callbackd.secret; do
    grep -qxF "$setting" "$service" || fail "payops-callbackd.service lacks $setting"
done
timer="$systemd/payops-inspect.timer"
grep -qx 'OnCalendar=\*:0/15' "$timer" || fail "the timer does not run every 15 minutes"
grep -qx 'Persistent=true' "$timer" || fail "the timer is not persistent"
echo "systemd units verified"
