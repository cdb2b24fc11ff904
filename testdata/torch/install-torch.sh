#!/usr/bin/env bash
# Creates the virtual environment DIR with torch==VERSION from PyPI, once (docs/running.md#pytorch).
# Usage: install-torch.sh VERSION DIR. DIR/.yarn-am-torch-complete marks a finished install: a DIR
# without it (an install cut off half-way) is removed and made again; with it, nothing is done.
# Python's venv module comes from Debian's python3-venv where it is missing (needs root, as
# testdata/ui/install-chromium.sh). The download goes straight into the environment (--no-cache-dir):
# a pip cache would keep a second copy of the ~3 GB of wheels.
set -euo pipefail
if [ $# -ne 2 ] || [ -z "$1" ] || [ -z "$2" ]; then
  echo "usage: install-torch.sh VERSION DIR" >&2
  exit 2
fi
version=$1
dir=$2
py=${PYTHON:-python3}
marker=$dir/.yarn-am-torch-complete

mkdir -p "$(dirname "$dir")"
# One install at a time per DIR: a second make waits for the first rather than both writing into it.
exec 9>"$dir.lock"
flock 9

if [ -f "$marker" ] && [ "$(cat "$marker")" = "torch==$version" ] && [ -x "$dir/bin/python" ]; then
  echo "torch-env: $dir (torch $version) is ready"
  exit 0
fi

if ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "torch-env: $py has no venv/ensurepip module; installing Debian's python3-venv"
  export DEBIAN_FRONTEND=noninteractive
  sudo_=""
  if [ "$(id -u)" != 0 ]; then sudo_="sudo"; fi
  $sudo_ apt-get update -q >/dev/null
  $sudo_ apt-get install -y -q --no-install-recommends python3-venv >/dev/null
fi

# Room for it: pip unpacks the ~3 GB of wheels under TMPDIR and installs ~5.3 GB into DIR. Refuse
# early, naming both places, rather than fail half-way with a full disk.
avail_mib() { df -Pm "$1" | awk 'NR==2 {print $4}'; }
tmp=${TMPDIR:-/tmp}
need_dir=5800 need_tmp=3500
if [ "$(df -P "$tmp" | awk 'NR==2 {print $1}')" = "$(df -P "$(dirname "$dir")" | awk 'NR==2 {print $1}')" ]; then
  need_dir=$((need_dir + need_tmp)) need_tmp=0
fi
have_dir=$(avail_mib "$(dirname "$dir")") have_tmp=$(avail_mib "$tmp")
if [ -e "$dir" ]; then have_dir=$((have_dir + $(du -sm "$dir" | cut -f1))); fi
if [ "$have_dir" -lt "$need_dir" ] || [ "$have_tmp" -lt "$need_tmp" ]; then
  echo "torch-env: not enough disk: $need_dir MiB needed for $dir (and TMPDIR $tmp: $need_tmp MiB more), have $have_dir MiB there and $have_tmp MiB in $tmp; free some or set TORCH_VENV / TMPDIR elsewhere" >&2
  exit 1
fi

start=$(date +%s)
if [ -e "$dir" ]; then
  echo "torch-env: $dir has no completion marker (an install cut off?): making it again"
  rm -rf "$dir"
fi
echo "torch-env: installing torch==$version from PyPI into $dir (about 3 GB to download, 5 GB on disk)"
"$py" -m venv "$dir"
"$dir/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check "torch==$version"
# The proof the tests rely on: the wheel imports without a GPU and has the gloo backend.
"$dir/bin/python" -c 'import torch, torch.distributed as d; assert d.is_gloo_available(), "no gloo"; print("torch-env: torch", torch.__version__, "imports; gloo available")'
echo "torch==$version" >"$marker"
echo "torch-env: done in $(( $(date +%s) - start )) s; $(du -sh "$dir" | cut -f1) in $dir"
