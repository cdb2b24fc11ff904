#!/usr/bin/env bash
# apt-install.sh PACKAGE...: Debian's packages for the test suites (chromium, krb5-user, python3-venv,
# docker.io, debootstrap), installed with apt-get, one apt-get at a time on this machine. make test
# installs them from parallel lanes (the background prefetch beside the secure suite), and a second
# apt-get update beside another fails at once on the lists lock ("Could not get lock
# /var/lib/apt/lists/lock"), whatever DPkg::Lock::Timeout says: each waits here for the one before,
# on a flock of apt's lists directory (no file of ours; apt's own locks are fcntl locks inside it).
# Needs root, or sudo.
set -euo pipefail
(($#)) || { echo "usage: apt-install.sh PACKAGE..." >&2; exit 2; }
sudo_=""
if [ "$(id -u)" != 0 ]; then sudo_="sudo"; fi
# shellcheck disable=SC2016
$sudo_ env DEBIAN_FRONTEND=noninteractive flock /var/lib/apt/lists bash -c \
  'apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "$@" >/dev/null' apt-install "$@"
