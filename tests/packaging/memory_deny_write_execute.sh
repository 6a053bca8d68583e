#!/usr/bin/env bash
# memory_deny_write_execute.sh PAYOPS CALLBACKD MDWE_EXEC: the units set
# MemoryDenyWriteExecute=yes; under the same rule (mdwe_exec) payops-callbackd starts, answers
# /healthz and a signed callback, and stops cleanly on SIGTERM, and `payops inspect` runs, on a
# sandbox database of the test's own. Exit 77 (skipped) on a kernel without the rule.
source "$(dirname "$0")/lib.sh"
payops=$1 callbackd=$2 mdwe=$3
english_home
sandbox="$scratch/sandbox"
trap '"$payops" sandbox stop --dir "$sandbox" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT

status=0
"$mdwe" /bin/true || status=$?
[[ $status -ne 77 ]] || { echo "this kernel has no PR_SET_MDWE: skipped"; exit 77; }

dsn=$("$payops" sandbox start --dir "$sandbox" --no-seed 2>"$scratch/sandbox.log" | tail -n 1) \
    || { cat "$scratch/sandbox.log" >&2; fail "the sandbox did not start"; }
secret=0123456789abcdef0123456789abcdef
(umask 077 && printf '%s' "$secret" >"$scratch/secret")

PAYOPS_DB="$dsn" "$mdwe" "$callbackd" --listen 127.0.0.1:0 --secret-file "$scratch/secret" --instance mdwe-test \
    >"$scratch/callbackd.out" 2>"$scratch/callbackd.err" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.* listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$scratch/callbackd.out")
    [[ -n $port ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$scratch/callbackd.err" >&2; fail "payops-callbackd died on start"; }
    sleep 0.2
done
[[ -n $port ]] || fail "payops-callbackd did not say where it listens"

curl -sf "http://127.0.0.1:$port/healthz" | grep -q '"status":"ok"' || fail "/healthz is not ok"
body='{"pay_no":"MDWE-0001","order_id":987654321,"amount_fen":100,"currency":"CNY","channel":"wechat","trade_status":"SUCCESS","paid_at":"2026-12-02T09:00:00.123Z"}'
timestamp=$(date +%s)
signature=$(printf '%s.%s' "$timestamp" "$body" | openssl dgst -sha256 -hmac "$secret" -hex | awk '{print $NF}')
answer=$(curl -s -w ' %{http_code}' -X POST -H "X-Payops-Timestamp: $timestamp" \
    -H "X-Payops-Signature: v1=$signature" --data "$body" "http://127.0.0.1:$port/callbacks/pay")
[[ $answer == *unknown_order*' 200' ]] || fail "the signed callback was answered: $answer"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[[ $status -eq 0 ]] || { cat "$scratch/callbackd.err" >&2; fail "payops-callbackd exited $status on SIGTERM"; }

status=0
"$mdwe" "$payops" inspect --db "$dsn" >"$scratch/inspect.out" 2>&1 || status=$?
# 1 is a finding (the callback above waits for its order), not a failure to run.
[[ $status -le 1 ]] || { cat "$scratch/inspect.out" >&2; fail "payops inspect exited $status"; }
grep -q 'unmatched' "$scratch/inspect.out" || fail "payops inspect did not report: $(cat "$scratch/inspect.out")"
echo "payops-callbackd and payops inspect run with memory never writable and executable at once"
