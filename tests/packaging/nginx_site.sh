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
