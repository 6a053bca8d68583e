#!/usr/bin/env bash
# no_display.sh PAYOPS CALLBACKD [CONSOLE]: --help and --version of each binary answer with exit 0
# where there is no display at all (over ssh, in a package's smoke test): DISPLAY,
# WAYLAND_DISPLAY and QT_QPA_PLATFORM unset.
source "$(dirname "$0")/lib.sh"
english_home
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM XDG_RUNTIME_DIR

expect() { # expect BINARY ARGUMENT TEXT
    local output status=0
    output=$("$1" "$2" 2>"$scratch/stderr") || status=$?
    [[ $status -eq 0 ]] || { cat "$scratch/stderr" >&2; fail "$(basename "$1") $2 exited $status"; }
    grep -qF -- "$3" <<<"$output" || fail "$(basename "$1") $2 does not say '$3': $output"
    if grep -qi 'display' "$scratch/stderr"; then
        cat "$scratch/stderr" >&2
        fail "$(basename "$1") $2 looked for a display"
    fi
}

for binary in "$@"; do
    expect "$binary" --version "payops "
done
expect "$1" --help "Usage: payops <command>"
expect "$2" --help "--secret-file <file>"
if [[ $# -ge 3 ]]; then
    expect "$3" --help "--page <page>"
    expect "$3" -h "Operations console for payment-callback incidents."
    # Anything else still needs the display, and says so instead of answering as if it had one.
    status=0
    timeout 30 "$3" --page overview >/dev/null 2>&1 </dev/null || status=$?
    [[ $status -ne 0 ]] || fail "payops-console started without a display"
fi
echo "--help and --version answer without a display"
