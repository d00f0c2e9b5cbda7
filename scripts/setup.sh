#!/usr/bin/env bash
# Installs what browserq needs on Debian/Ubuntu: redis-server and Chromium from apt (when missing),
# then the package with its worker and test extras into ./.venv. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium fonts-liberation)
python3 -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} with apt"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[dev]'
echo "setup: ready ($(.venv/bin/python --version), $(redis-server --version | cut -d' ' -f3), $(command -v chromium || command -v chromium-browser))"
