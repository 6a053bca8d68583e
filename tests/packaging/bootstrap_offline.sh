#!/usr/bin/env bash
# bootstrap_offline.sh SOURCE_DIR: on a machine that has every package and the SDKs of tests/sdk,
# script/bootstrap calls no package manager. apt-get, apt, apt-cache, aptitude, sudo, dpkg and npm
# are replaced by stand-ins that note the call and fail loudly; dpkg-query, which the check
# itself uses, stays the real one.
source "$(dirname "$0")/lib.sh"
source_dir=$1

fake="$scratch/bin"
calls="$scratch/calls"
mkdir -p "$fake"
for tool in apt-get apt apt-cache aptitude sudo dpkg npm; do
    printf '#!/bin/sh\necho "%s $*" >>"%s"\necho "%s must not run here" >&2\nexit 97\n' \
        "$tool" "$calls" "$tool" >"$fake/$tool"
    chmod +x "$fake/$tool"
done

status=0
output=$(PATH="$fake:$PATH" "$source_dir/script/bootstrap" 2>&1) || status=$?
echo "$output"
[[ ! -e "$calls" ]] || fail "bootstrap called a package manager: $(cat "$calls")"
[[ $status -eq 0 ]] || fail "bootstrap exited $status"
grep -q 'all [0-9]* packages present' <<<"$output" || fail "bootstrap did not say that all packages are present"

# The stand-ins do catch a call: a copy that asks for a package nobody has must reach them.
sed 's/^packages=(/packages=(payops-test-absent-package /' "$source_dir/script/bootstrap" >"$scratch/bootstrap"
status=0
PATH="$fake:$PATH" bash "$scratch/bootstrap" >/dev/null 2>&1 || status=$?
[[ $status -ne 0 && -s "$calls" ]] || fail "the stand-ins were not reached by a bootstrap that needs a package"
echo "bootstrap calls no package manager when everything is installed"
