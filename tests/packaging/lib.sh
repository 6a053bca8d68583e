# Shared by the packaging tests: a scratch folder removed on exit, and failing with a reason.
set -euo pipefail

scratch=$(mktemp -d "${TMPDIR:-/tmp}/payops-packaging.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Runs a checker and fails on a non-zero exit or on anything it says on stderr (groff,
# systemd-analyze and nginx report some problems only as warnings there).
run_silent_check() {
    local errors="$scratch/stderr"
    "$@" 2>"$errors" || { cat "$errors" >&2; fail "$1 failed"; }
    if [[ -s "$errors" ]]; then
        cat "$errors" >&2
        fail "$1 warned"
    fi
}

# English whatever the machine's language, and no console settings of the user's (they may
# choose another language).
english_home() {
    export LC_ALL=C.UTF-8 LANG=C.UTF-8 HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/home/.config"
    unset LANGUAGE LC_MESSAGES
    mkdir -p "$HOME"
}
