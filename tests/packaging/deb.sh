#!/usr/bin/env bash
# deb.sh BUILD_DIR: `cpack -G DEB` makes the package (gzip here: several times faster than the
# release's xz), which holds what it promises, with stripped binaries; unpacked into a
# throwaway root with `dpkg -x`, each binary answers --version and --help from there without
# a display.
source "$(dirname "$0")/lib.sh"
build_dir=$1
english_home
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM

cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$scratch/out" \
    -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip >"$scratch/cpack.log" 2>&1 || { cat "$scratch/cpack.log" >&2; fail "cpack"; }
debs=("$scratch"/out/payops_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "cpack made no single payops_*.deb: $(ls "$scratch/out")"
deb=${debs[0]}
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

dpkg-deb --contents "$deb" | awk '{print $1, $NF}' >"$scratch/contents"
expect_file() { # expect_file PATH [MODE]
    local line
    line=$(grep -E " \./${1#/}\$" "$scratch/contents") || fail "the package lacks $1"
    [[ -z ${2:-} || $line == "$2 "* ]] || fail "$1 is ${line%% *}, not $2"
}
expect_file /usr/bin/payops -rwxr-xr-x
expect_file /usr/bin/payops-callbackd -rwxr-xr-x
expect_file /usr/bin/payops-console -rwxr-xr-x
expect_file /usr/share/applications/payops-console.desktop
for size in 16 24 32 48 64 128 256; do
    expect_file "/usr/share/icons/hicolor/${size}x${size}/apps/payops.png"
done
expect_file /usr/share/icons/hicolor/scalable/apps/payops.svg
expect_file /usr/share/metainfo/io.github.payops.console.metainfo.xml
expect_file /usr/share/man/man1/payops.1.gz
expect_file /usr/share/man/man1/payops-console.1.gz
expect_file /usr/share/man/man8/payops-callbackd.8.gz
expect_file /usr/lib/systemd/system/payops-callbackd.service
expect_file /usr/lib/systemd/system/payops-inspect.service
expect_file /usr/lib/systemd/system/payops-inspect.timer
expect_file /usr/lib/systemd/system/payops-.service.d/sandbox.conf
expect_file /etc/payops/callbackd.conf -rw-------
expect_file /etc/payops/inspect.conf -rw-------
expect_file /usr/share/doc/payops/examples/nginx/payops-callbackd.conf
expect_file /usr/share/doc/payops/docs/operations.md
expect_file /usr/share/doc/payops/docs/decisions/README.md

mkdir "$scratch/control"
dpkg-deb --control "$deb" "$scratch/control"
for settings in callbackd.conf inspect.conf; do
    grep -qx "/etc/payops/$settings" "$scratch/control/conffiles" || fail "$settings is not a conffile"
    grep -q "^ *for settings in .*/etc/payops/$settings" "$scratch/control/postinst" ||
        fail "postinst does not make $settings root's only"
done
grep -q 'chmod 0600 "$settings"' "$scratch/control/postinst" || fail "postinst does not chmod the settings files"
for script in postinst prerm postrm; do
    [[ -x "$scratch/control/$script" ]] || fail "the package has no $script"
    sh -n "$scratch/control/$script" || fail "$script is not valid sh"
done
# The package must not start the endpoint before its settings and secret exist.
# (Its message to the operator, an echo, says how; comments do not count either.)
if grep -Ev '^[[:space:]]*(#|echo )' "$scratch/control/postinst" | grep -Eq 'systemctl (enable|start|restart)'; then
    fail "postinst enables or starts a unit"
fi
depends=$(dpkg-deb --field "$deb" Depends)
for dependency in libqt6sql6-mysql libqt6core6 libmicrohttpd12 libcurl4; do
    grep -q "$dependency" <<<"$depends" || fail "Depends lacks $dependency: $depends"
done

root="$scratch/root"
dpkg -x "$deb" "$root"
for binary in payops payops-callbackd payops-console; do
    file "$root/usr/bin/$binary" | grep -q ', stripped' || fail "$binary is not stripped"
done
"$(dirname "$0")/no_display.sh" "$root/usr/bin/payops" "$root/usr/bin/payops-callbackd" "$root/usr/bin/payops-console"
zcat "$root/usr/share/man/man1/payops.1.gz" | grep -q "^\.TH PAYOPS 1 .*payops $(dpkg-deb --field "$deb" Version)" \
    || fail "payops.1 does not carry the package's version"
echo "the package holds what it promises and runs from a throwaway root"
