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
bash "$(dirname "$0")/../apt-install.sh" chromium
echo "install-chromium: installed $(command -v chromium)"
