#!/usr/bin/env bash
# What [flink] internal-tls costs (docs/flink.md#what-internal-tls-costs): the test job's relay mode at
# parallelism 2 on two TaskManagers of one slot, run with internal TLS on and off alternating (on first
# in odd pairs, off first in even ones, so a slow phase of a shared machine hits both alike). Per run:
# seconds from `yarn-am submit --detach` to the job RUNNING (polled through the AM's proxy every 0.2 s)
# and the records per second both map subtasks receive over WINDOW s after WARM s of warm-up (from the
# relay lines in the TaskManagers' stdout). Report only: nothing is asserted.
#
#   source .minicluster/env; testdata/flink/internaltls-cost.sh [PAIRS]     (make flink-dist flink-job first)
set -euo pipefail
pairs=${1:-3}
warm=${WARM:-5}
window=${WINDOW:-10}
bin=${YARN_AM_BIN:-$PWD/bin/yarn-am}
home=${YARN_AM_FLINK_HOME:-$HOME/.cache/yarn-am/flink-1.20.5}
jar=${YARN_AM_FLINK_JOB:-$PWD/bin/flink-job/yarn-am-flink-job.jar}
: "${YARN_AM_NM_LOG_DIRS:?source .minicluster/env first}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

relay_rate() { # $1: the application; the records/s of both subtasks once both have WINDOW s past WARM s
	local files=()
	for d in ${YARN_AM_NM_LOG_DIRS//,/ }; do files+=("$d/$1"/*/stdout); done
	cat "${files[@]}" 2>/dev/null | awk -v warm="$warm" -v window="$window" '
		/YARN_AM_FLINK_RELAY/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			s = f["subtask"]
			if (f["seconds"] + 0 < warm) next
			if (!(s in r0)) { r0[s] = f["records"]; s0[s] = f["seconds"] }
			r1[s] = f["records"]; s1[s] = f["seconds"]
		}
		END {
			n = 0; total = 0
			for (s in r1) { if (s1[s] - s0[s] < window) exit; total += (r1[s] - r0[s]) / (s1[s] - s0[s]); n++ }
			if (n == 2) printf "%.0f", total
		}'
}

run() { # $1: true|false; prints "on running_s records_per_s load"
	local on=$1 job=$tmp/relay-$1.toml
	cat >"$job" <<TOML
name = "internal-tls-cost-$on"
max-attempts = 1
[flink]
home = "$home"
jar = "$jar"
args = ["relay"]
internal-tls = $on
[flink.config]
"taskmanager.numberOfTaskSlots" = 1
"parallelism.default" = 2
[taskexecutor]
instances = 2
memory = 1024
max-failures = 0
TOML
	local t0 id ui="" running="" rate=""
	t0=$(date +%s.%N)
	id=$("$bin" submit --detach "$job" | tail -1)
	while [ -z "$running" ]; do
		if [ -z "$ui" ]; then
			ui=$("$bin" status "$id" --json | jq -r '.am.links[]? | select(.name == "Flink UI") | .url' 2>/dev/null || true)
		fi
		if [ -n "$ui" ] && curl -sf --max-time 5 "${ui%/}/jobs/overview" | jq -e '.jobs[0].state == "RUNNING"' >/dev/null 2>&1; then
			running=$(echo "$(date +%s.%N) - $t0" | bc)
		fi
		sleep 0.2
	done
	while [ -z "$rate" ]; do
		sleep 1
		rate=$(relay_rate "$id")
	done
	"$bin" kill "$id" >/dev/null
	echo "$on $running $rate $(cut -d' ' -f1 /proc/loadavg)"
}

echo "internal-tls submit_to_running_s records_per_s load1"
for ((p = 1; p <= pairs; p++)); do
	if ((p % 2)); then order="true false"; else order="false true"; fi
	for on in $order; do run "$on"; done
done
