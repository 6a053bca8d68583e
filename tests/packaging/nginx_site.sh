#!/usr/bin/env bash
# nginx_site.sh SOURCE_DIR: `nginx -t` accepts the example site, inside a wrapper nginx.conf in a
# temporary prefix (-p, -e: nothing under /var or /etc) with a self-signed certificate.
source "$(dirname "$0")/lib.sh"
source_dir=$1
site="$source_dir/packaging/nginx/payops-callbackd.conf"

mkdir -p "$scratch/logs"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=payops.example.com \
    -keyout "$scratch/key.pem" -out "$scratch/cert.pem" 2>/dev/null || fail "openssl could not make a certificate"
sed -e "s|/etc/ssl/certs/payops.example.com.pem|$scratch/cert.pem|" \
    -e "s|/etc/ssl/private/payops.example.com.key|$scratch/key.pem|" "$site" >"$scratch/site.conf"
grep -q "$scratch/key.pem" "$scratch/site.conf" || fail "the site names no certificate key to replace"
cat >"$scratch/nginx.conf" <<CONF
pid $scratch/nginx.pid;
error_log $scratch/logs/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $scratch/body;
    proxy_temp_path $scratch/proxy;
    fastcgi_temp_path $scratch/fastcgi;
    uwsgi_temp_path $scratch/uwsgi;
    scgi_temp_path $scratch/scgi;
    include $scratch/site.conf;
}
CONF
output=$(nginx -t -p "$scratch" -c "$scratch/nginx.conf" -e "$scratch/logs/error.log" 2>&1) \
    || { echo "$output" >&2; fail "nginx -t"; }
echo "$output"
if grep -q '\[warn\]' <<<"$output"; then fail "nginx warned"; fi

# The limits are the endpoint's own (see payops-callbackd --help).
grep -q 'client_max_body_size 64k;' "$site" || fail "the body limit is not --max-body-bytes"
grep -q 'large_client_header_buffers 4 16k;' "$site" || fail "the header limit is not --max-header-bytes"
grep -q 'client_body_timeout 10s;' "$site" || fail "the body timeout is not --request-timeout"
grep -q 'proxy_set_header X-Forwarded-For' "$site" || fail "the client's address is not passed on"
echo "nginx example site valid"

# The per-address limits hold on a running nginx: the same site, on free loopback ports, with
# the limits made small enough to cross in a few requests (one in flight; a burst of sixty, then
# one a minute), and the rate's refusals answered 503 so that they are told from the 429 of the
# connection limit.
grep -q 'limit_conn payops_per_address' "$site" || fail "no per-address connection limit"
grep -q 'limit_req zone=payops_requests' "$site" || fail "no per-address request rate"
# Ports below the kernel's ephemeral range, so that no client socket of a test running beside
# this one holds them; nginx is started again on other ports should one be taken anyway.
free_port() {
    echo $((20000 + RANDOM % 12000))
}
start_live_nginx() {
    https_port=$(free_port) http_port=$(free_port) upstream_port=$(free_port)
    sed -e "s|listen 443 ssl http2;|listen 127.0.0.1:$https_port ssl http2;|" \
        -e "s|listen 80;|listen 127.0.0.1:$http_port;|" -e '/listen \[::\]/d' \
        -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$upstream_port;|" \
        -e 's|rate=500r/s|rate=1r/m|' -e 's|burst=1000|burst=60|' -e 's|limit_req_status 429;|limit_req_status 503;|' \
        -e 's|limit_conn payops_per_address 64;|limit_conn payops_per_address 1;|' \
        "$scratch/site.conf" >"$scratch/live-site.conf"
    sed -e "s|include $scratch/site.conf;|include $scratch/live-site.conf;|" "$scratch/nginx.conf" >"$scratch/live.conf"
    printf 'daemon off;\nmaster_process off;\n' | cat - "$scratch/live.conf" >"$scratch/live-nginx.conf"
    nginx -p "$scratch" -c "$scratch/live-nginx.conf" -e "$scratch/logs/error.log" 2>>"$scratch/logs/start.log" &
    nginx_pid=$!
    for _ in $(seq 50); do
        kill -0 "$nginx_pid" 2>/dev/null || return 1
        curl -sk -o /dev/null "https://127.0.0.1:$https_port/" && return 0
        sleep 0.1
    done
    return 1
}
nginx_pid=
trap 'kill $nginx_pid 2>/dev/null; wait $nginx_pid 2>/dev/null; rm -rf "$scratch"' EXIT
started=no
for _ in 1 2 3 4 5; do
    if start_live_nginx; then
        started=yes
        break
    fi
    kill "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
done
[[ $started == yes ]] || { cat "$scratch/logs/start.log" >&2; fail "nginx did not start on a free port"; }
post() { curl -sk -o /dev/null -w '%{http_code}' -X POST --data '{}' "https://127.0.0.1:$https_port/callbacks/pay"; }

# A request held open (its body never sent) is the one allowed in flight: once it is, the next
# is refused. (Until its TLS handshake is done, callbacks pass, to 502: no endpoint listens
# behind this nginx.)
mkfifo "$scratch/held"
openssl s_client -quiet -connect "127.0.0.1:$https_port" <"$scratch/held" >/dev/null 2>&1 &
holder=$!
exec 3>"$scratch/held" # the request stays open as long as this does
printf 'POST /callbacks/pay HTTP/1.1\r\nHost: payops.example.com\r\nContent-Length: 100\r\n\r\n' >&3
code=
for _ in $(seq 40); do
    sleep 0.2
    code=$(post)
    [[ "$code" == 429 ]] && break
done
exec 3>&-
kill $holder 2>/dev/null || true
wait $holder 2>/dev/null || true
[[ "$code" == 429 ]] || fail "a second callback in flight from one address got $code, not 429"
sleep 0.5

# Past the burst, callbacks from one address are refused until the rate allows more.
codes=$(for _ in $(seq 80); do post; echo; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
grep -q '503' <<<"$codes" || fail "eighty callbacks at once from one address were never limited: $codes"
grep -q '502' <<<"$codes" || fail "no callback passed the limits to the endpoint: $codes"
echo "nginx limits hold on a live nginx: $codes"
