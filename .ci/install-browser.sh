#!/usr/bin/env bash
# Installs Debian's chromium for the Playwright browser tests (tests marked `browser`).
# The tests launch it with `executable_path="/usr/bin/chromium"`, so no Playwright-managed
# browser download is needed. Idempotent and quiet: does nothing when chromium is there, and
# prints apt's output only when the install fails.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-browser.sh: could not install chromium with apt-get" >&2
    exit 1
fi
echo "install-browser.sh: installed $(/usr/bin/chromium --version 2>/dev/null)"
