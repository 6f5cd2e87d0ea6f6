#!/usr/bin/env bash
# Installs the Debian tools that tests and benches drive for real, when missing and when we are root.
# Tests that need a tool which is still missing fail with a clear message; nothing is skipped silently.
set -euo pipefail
need=()
command -v openssl  >/dev/null || need+=(openssl)
command -v chromium >/dev/null || need+=(chromium)
command -v protoc   >/dev/null || need+=(protobuf-compiler)
command -v wrk      >/dev/null || need+=(wrk)
command -v wget     >/dev/null || need+=(wget)
command -v curl     >/dev/null || need+=(curl)
# The binary RPC's third-party client test runs Debian's python3 with its protobuf package.
/usr/bin/python3 -c 'import google.protobuf' 2>/dev/null || need+=(python3-protobuf)
[ -d /usr/share/doc/python3.11/html/library ] || need+=(python3.11-doc)   # real HTML the crawler tests serve
command -v h2load   >/dev/null || need+=(nghttp2-client)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "system-deps: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
  exit 0
fi
echo "system-deps: installing ${need[*]} (Debian packages)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
