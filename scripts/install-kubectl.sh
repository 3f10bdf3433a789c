#!/usr/bin/env bash
# Makes two kubectl builds available to the test suites:
#   - kubectl 1.20 from Debian's kubernetes-client package, unpacked into .tools/kubectl-1.20/
#     (never installed over a system kubectl);
#   - a current kubectl on PATH; when none exists, Debian's package is installed system-wide.
# Idempotent: does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
legacy="$root/.tools/kubectl-1.20"

need_apt_update=1
apt_update() {
  if [ "$need_apt_update" = 1 ]; then apt-get update -qq >/dev/null; need_apt_update=0; fi
}

if [ ! -x "$legacy/usr/bin/kubectl" ]; then
  echo "== unpacking Debian kubernetes-client (kubectl 1.20) into .tools/"
  apt_update
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -qq kubernetes-client >/dev/null)
  mkdir -p "$legacy"
  dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$legacy"
  rm -rf "$tmp"
fi
"$legacy/usr/bin/kubectl" version --client 2>/dev/null | head -1 || true

if ! command -v kubectl >/dev/null 2>&1; then
  echo "== no kubectl on PATH: installing Debian kubernetes-client"
  apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubernetes-client >/dev/null
fi
kubectl version --client 2>/dev/null | head -1 || true
