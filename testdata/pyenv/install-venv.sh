#!/usr/bin/env bash
# Creates a virtual environment with pinned packages from PyPI, once: the torch environment
# (testdata/torch/torch.mk, docs/running.md#pytorch) and the JAX one (testdata/jax/jax.mk,
# docs/running.md#jax).
# Usage: install-venv.sh NAME DIR NEED_DIR_MIB NEED_TMP_MIB CHECK SPEC...
#   NAME          what the messages, the marker and the hint name (torch, jax)
#   DIR           the environment
#   NEED_DIR_MIB  room it takes installed; NEED_TMP_MIB room pip unpacks the wheels into, under TMPDIR
#   CHECK         Python code the new environment must run (the proof the tests rely on)
#   SPEC...       pip requirements, each pinned (torch==2.15.0)
# DIR/.yarn-am-NAME-complete holds the SPECs of a finished install: a DIR without it (an install cut
# off half-way) or with other SPECs is removed and made again; with it, nothing is done. Python's venv
# module comes from Debian's python3-venv where it is missing (needs root, as
# testdata/ui/install-chromium.sh). The download goes straight into the environment (--no-cache-dir):
# a pip cache would keep a second copy of the wheels.
set -euo pipefail
if [ $# -lt 6 ] || [ -z "$1" ] || [ -z "$2" ]; then
  echo "usage: install-venv.sh NAME DIR NEED_DIR_MIB NEED_TMP_MIB CHECK SPEC..." >&2
  exit 2
fi
name=$1 dir=$2 need_dir=$3 need_tmp=$4 check=$5 size=$3
shift 5
specs="$*"
py=${PYTHON:-python3}
marker=$dir/.yarn-am-$name-complete

mkdir -p "$(dirname "$dir")"
# One install at a time per DIR: a second make waits for the first rather than both writing into it.
exec 9>"$dir.lock"
flock 9

if [ -f "$marker" ] && [ "$(cat "$marker")" = "$specs" ] && [ -x "$dir/bin/python" ]; then
  echo "$name-env: $dir ($specs) is ready"
  exit 0
fi

if ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "$name-env: $py has no venv/ensurepip module; installing Debian's python3-venv"
  bash "$(dirname "$0")/../apt-install.sh" python3-venv
fi

# Room for it: pip unpacks the wheels under TMPDIR and installs into DIR. Refuse early, naming both
# places, rather than fail half-way with a full disk.
avail_mib() { df -Pm "$1" | awk 'NR==2 {print $4}'; }
tmp=${TMPDIR:-/tmp}
if [ "$(df -P "$tmp" | awk 'NR==2 {print $1}')" = "$(df -P "$(dirname "$dir")" | awk 'NR==2 {print $1}')" ]; then
  need_dir=$((need_dir + need_tmp)) need_tmp=0
fi
have_dir=$(avail_mib "$(dirname "$dir")") have_tmp=$(avail_mib "$tmp")
if [ -e "$dir" ]; then have_dir=$((have_dir + $(du -sm "$dir" | cut -f1))); fi
if [ "$have_dir" -lt "$need_dir" ] || [ "$have_tmp" -lt "$need_tmp" ]; then
  echo "$name-env: not enough disk: $need_dir MiB needed for $dir (and TMPDIR $tmp: $need_tmp MiB more), have $have_dir MiB there and $have_tmp MiB in $tmp; free some or set ${name^^}_VENV / TMPDIR elsewhere" >&2
  exit 1
fi

start=$(date +%s)
if [ -e "$dir" ]; then
  echo "$name-env: $dir has no completion marker for $specs (an install cut off?): making it again"
  rm -rf "$dir"
fi
echo "$name-env: installing $specs from PyPI into $dir (about $size MiB on disk)"
"$py" -m venv "$dir"
# shellcheck disable=SC2086 # one word per requirement
"$dir/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check $specs
"$dir/bin/python" -c "$check"
echo "$specs" >"$marker"
echo "$name-env: done in $(( $(date +%s) - start )) s; $(du -sh "$dir" | cut -f1) in $dir"
