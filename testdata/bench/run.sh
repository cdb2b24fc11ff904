#!/usr/bin/env bash
# `make bench`: yarn-am against Hadoop's DistributedShell, and yarn-am's [flink] mode against Flink's own
# YARN application mode, on the mini cluster (testdata/bench/README.md).
#
#   testdata/bench/run.sh [flags of testdata/bench/main.go...]   e.g. -pairs 5 -sizes 8,32 -gpu no, -mode flink
#
# Builds yarn-am and the benchmark driver, installs gnuplot (Debian: gnuplot-nox) if it is missing,
# starts the mini cluster in $MINICLUSTER_DIR (default .minicluster) once, runs the benchmark and stops
# the cluster again - unless it was already running before, in which case it is left running (it is
# someone else's). Output: testdata/bench/out/ (results.csv, flink.csv, waterfall.csv, waterfall.svg, summary.md, chart.png, logs/).
# Exit: that of the benchmark driver (0 all runs measured, 1 a run could not be measured, 2 bad flags).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
MC_DIR="${MINICLUSTER_DIR:-.minicluster}"
GO="${GO:-go}"
OUT=testdata/bench/out

log() { echo "bench: $*" >&2; }

make --no-print-directory build GO="$GO"
"$GO" build -o bin/bench ./testdata/bench

if ! command -v gnuplot >/dev/null; then
  log "installing gnuplot-nox for the chart (apt-get)"
  if ! { apt-get install -y -q gnuplot-nox >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q gnuplot-nox >/dev/null 2>&1; }; }; then
    log "could not install gnuplot: the table and CSV are written, the chart is not"
  fi
fi

started_here=1
if [[ -f "$MC_DIR/pid" ]] && kill -0 "$(cat "$MC_DIR/pid")" 2>/dev/null; then
  started_here=0
  log "a mini cluster already runs in $MC_DIR: using it, and leaving it running afterwards"
fi
stop_cluster() {
  if [[ $started_here == 1 ]]; then
    make --no-print-directory minicluster-down MINICLUSTER_DIR="$MC_DIR" || true
  fi
}
trap stop_cluster EXIT
make --no-print-directory minicluster-up MINICLUSTER_DIR="$MC_DIR"
# shellcheck disable=SC1091
source "$MC_DIR/env"

rm -rf "$OUT/logs" "$OUT/jobs"
mkdir -p "$OUT"
log "uptime before: $(uptime)"
if [[ " $* " == *" -mode autoscale "* ]]; then
  # The autoscale row: the rate-step test on Flink 1.20 at the documented defaults (scale-down grace
  # 5m), 2 minutes steady, its trace in $OUT/autoscale, then the timeline and the replay.
  rm -rf "$OUT/autoscale"; mkdir -p "$OUT/autoscale"
  rc=0 home="$HOME/.cache/yarn-am/flink-1.20.5" prev=
  for a in "$@"; do [[ $prev == -flink-home ]] && home=$a; prev=$a; done
  YARN_AM_AUTOSCALE_TRACE="$PWD/$OUT/autoscale" YARN_AM_AUTOSCALE_GRACE=default YARN_AM_AUTOSCALE_STEADY=2m \
    YARN_AM_BIN="$PWD/bin/yarn-am" YARN_AM_FLINK_HOME="$home" \
    "$GO" test -tags integration -count=1 -timeout 60m -v -run '^TestFlinkAutoscaleFollowsARateStep$/^1\.20\.5$' ./framework/flink \
    >"$OUT/autoscale/test.log" 2>&1 || rc=$?
  grep -E 'measured|--- ' "$OUT/autoscale/test.log" >&2 || true
  bin/bench -mode autoscale -out "$OUT" -autoscale-trace "$OUT/autoscale/rate-step-1.20.5.json" || rc=$?
  log "uptime after: $(uptime)"
  exit $rc
fi
rc=0
bin/bench -out "$OUT" -yarn-am bin/yarn-am "$@" || rc=$?
log "uptime after: $(uptime)"
exit $rc
