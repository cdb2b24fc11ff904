#!/usr/bin/env bash
# Installs MIT kinit/klist (Debian's krb5-user) for the secure suite's ticket-cache tests, once:
# does nothing when kinit is already on PATH. Non-interactive (no realm prompt: the tests set
# KRB5_CONFIG to the mini cluster's krb5.conf).
set -euo pipefail
if command -v kinit >/dev/null 2>&1; then
  exit 0
fi
bash "$(dirname "$0")/../apt-install.sh" krb5-user
command -v kinit >/dev/null
