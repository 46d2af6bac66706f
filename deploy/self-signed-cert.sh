#!/usr/bin/env bash
# Makes a self-signed TLS certificate for trying mino on one machine and for
# its tests: DIR/cert.pem and DIR/key.pem, an ECDSA P-256 key and a server
# (not CA) certificate for localhost and 127.0.0.1, valid DAYS days (30 by
# default). Clients that check (rustls, browsers) accept it as its own trust
# anchor: pass cert.pem as the CA file. Used by local-lib.sh, the Rust test
# kit (testkit/src/cert.rs) and the browser tests' harness.
#
#   deploy/self-signed-cert.sh /tmp/mino-tls [DAYS]
#
# Needs openssl.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DIR [DAYS]" >&2; exit 2; }
dir=$1
days=${2:-30}
mkdir -p "$dir"
# openssl's progress output is shown only when it fails.
if ! err=$(openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$dir/key.pem" -out "$dir/cert.pem" -days "$days" -subj /CN=localhost \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -addext "basicConstraints=critical,CA:FALSE" \
  -addext "keyUsage=critical,digitalSignature" \
  -addext "extendedKeyUsage=serverAuth" 2>&1); then
  echo "$err" >&2
  exit 1
fi
