#!/usr/bin/env python3
"""Builds the payment platforms' notifications as they send them, independently of payops:
signatures by the openssl command, WeChat Pay's AES-256-GCM by Python's cryptography.

  platformnotify.py wechat --key PRIVATE.pem --apiv3-key-file FILE --serial S
                    [--timestamp T] [--nonce N] [--flip ciphertext|tag]
                    [--event-type TRANSACTION.SUCCESS|REFUND.SUCCESS|...] RESOURCE_JSON
      prints {"headers": {...}, "body": "..."}: the resource (a transaction, or a refund for a
      REFUND.* event) sealed with the APIv3 key, the body signed over
      "timestamp\\nnonce\\nbody\\n"
  platformnotify.py alipay --key PRIVATE.pem [--charset utf-8|gbk] [--sign-charset C]
                    name=value ...
      prints the form's bytes: every value in --charset, percent-encoded, with sign_type=RSA2
      and sign over the other parameters sorted by name, in --sign-charset (default: --charset)
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import time
import urllib.parse

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def rsa_sha256(key, message):
    signed = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=message,
                            capture_output=True, check=True)
    return base64.b64encode(signed.stdout).decode("ascii")


def wechat(args):
    with open(args.apiv3_key_file, "rb") as f:
        apiv3_key = f.read().rstrip(b"\r\n")
    nonce = base64.b64encode(os.urandom(9)).decode("ascii")  # 12 characters
    refund = args.event_type.startswith("REFUND.")
    associated = "refund" if refund else "transaction"
    sealed = bytearray(AESGCM(apiv3_key).encrypt(nonce.encode(), args.transaction.encode(),
                                                 associated.encode()))
    if args.flip == "ciphertext":
        sealed[0] ^= 0x01
    elif args.flip == "tag":
        sealed[-1] ^= 0x01
    body = json.dumps({
        "id": "EV-" + nonce, "create_time": "2026-12-02T17:00:00+08:00",
        "resource_type": "encrypt-resource", "event_type": args.event_type,
        "summary": "退款状态变化" if refund else "支付成功",
        "resource": {"original_type": associated, "algorithm": "AEAD_AES_256_GCM",
                     "ciphertext": base64.b64encode(bytes(sealed)).decode("ascii"),
                     "associated_data": associated, "nonce": nonce}},
        ensure_ascii=False, separators=(",", ":"))
    timestamp = str(args.timestamp if args.timestamp is not None else int(time.time()))
    header_nonce = args.nonce or base64.b16encode(os.urandom(16)).decode("ascii")
    message = (timestamp + "\n" + header_nonce + "\n" + body + "\n").encode()
    print(json.dumps({"body": body, "headers": {
        "Wechatpay-Serial": args.serial, "Wechatpay-Timestamp": timestamp,
        "Wechatpay-Nonce": header_nonce, "Wechatpay-Signature": rsa_sha256(args.key, message),
        "Wechatpay-Signature-Type": "WECHATPAY2-SHA256-RSA2048"}}, ensure_ascii=False))


def alipay(args):
    params = [p.split("=", 1) for p in args.params]
    params.append(["charset", args.charset])
    sign_charset = args.sign_charset or args.charset
    content = "&".join(k + "=" + v for k, v in sorted(params) if v)
    sign = rsa_sha256(args.key, content.encode(sign_charset))
    params += [["sign_type", "RSA2"], ["sign", sign]]
    body = "&".join(urllib.parse.quote_from_bytes(k.encode(args.charset), safe="") + "=" +
                    urllib.parse.quote_from_bytes(v.encode(args.charset), safe="")
                    for k, v in params)
    sys.stdout.buffer.write(body.encode("ascii"))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="platform", required=True)
    w = sub.add_parser("wechat")
    w.add_argument("--key", required=True)
    w.add_argument("--apiv3-key-file", required=True)
    w.add_argument("--serial", required=True)
    w.add_argument("--timestamp", type=int)
    w.add_argument("--nonce")
    w.add_argument("--flip", choices=["ciphertext", "tag"])
    w.add_argument("--event-type", default="TRANSACTION.SUCCESS")
    w.add_argument("transaction")
    a = sub.add_parser("alipay")
    a.add_argument("--key", required=True)
    a.add_argument("--charset", default="utf-8")
    a.add_argument("--sign-charset")
    a.add_argument("params", nargs="*")
    args = parser.parse_args()
    wechat(args) if args.platform == "wechat" else alipay(args)


if __name__ == "__main__":
    main()
