#!/usr/bin/env bash
# man_pages.sh SOURCE_DIR PAYOPS CALLBACKD [CONSOLE]: each man page formats without a warning,
# and names every option its binary's --help lists (so a new flag without a page fails here).
source "$(dirname "$0")/lib.sh"
source_dir=$1
shift
export QT_QPA_PLATFORM=offscreen

check_page() {
    local page=$1 binary=$2
    run_silent_check groff -man -ww -z "$page"
    local options
    options=$("$binary" --help | grep -o -- '--[a-z][a-z-]*' | sort -u | grep -v -- '--help-all')
    [[ -n "$options" ]] || fail "$binary --help lists no option"
    local option
    for option in $options; do
        # groff writes a hyphen in an option as \-.
        grep -qF -- "${option//-/\\-}" "$page" || fail "$(basename "$page") does not describe $option"
    done
}

check_page "$source_dir/packaging/man/payops.1" "$1"
check_page "$source_dir/packaging/man/payops-callbackd.8" "$2"
if [[ $# -ge 3 ]]; then
    check_page "$source_dir/packaging/man/payops-console.1" "$3"
fi
# Every command payops --help lists has its entry.
for command in $("$1" --help | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
    grep -q "^\.B[RI]* $command\b" "$source_dir/packaging/man/payops.1" \
        || fail "payops.1 does not describe the command $command"
done
echo "man pages format cleanly and describe every option"
