#!/usr/bin/env bash
# Installs Debian's chromium for the web UI test (am/ui_integration_test.go), once: does nothing when
# a chromium binary is already on PATH. Needs root (apt-get), as on the project's machines and CI.
set -euo pipefail
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "install-chromium: $(command -v "$b") is already installed"
    exit 0
  fi
done
export DEBIAN_FRONTEND=noninteractive
sudo_=""
if [ "$(id -u)" != 0 ]; then sudo_="sudo"; fi
$sudo_ apt-get update -q >/dev/null
$sudo_ apt-get install -y -q --no-install-recommends chromium >/dev/null
echo "install-chromium: installed $(command -v chromium)"
