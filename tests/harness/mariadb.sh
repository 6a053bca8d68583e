#!/bin/sh
# Starts or stops the one MariaDB server a test run shares, in a fresh temporary directory,
# through `payops sandbox` (the same code path users run).
set -eu
action=$1 dir=$2 payops=$3
# A test that froze the server (SIGSTOP) and died before resuming it would leave a server
# that cannot even be stopped.
if [ -f "$dir/mysqld.pid" ]; then
    kill -CONT "$(cat "$dir/mysqld.pid")" 2>/dev/null || true
fi
case "$action" in
start)
    "$payops" sandbox stop --dir "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    "$payops" sandbox start --dir "$dir" --no-seed --log-level warn
    ;;
stop)
    "$payops" sandbox stop --dir "$dir"
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|stop DIR PAYOPS" >&2
    exit 2
    ;;
esac
