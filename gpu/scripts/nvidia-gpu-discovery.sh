#!/usr/bin/env bash
# yarn-am GPU discovery for NVIDIA GPUs (the default script of the gpu driver, vendor=nvidia).
#
#   nvidia-gpu-discovery.sh <amount> [--enable-coordination-mode | --enable-coordination | --no-coordination]
#                           [--coordination-dir DIR | --coordination-file FILE] [--lock-timeout SECONDS]
#                           [--topology connected|prefer|wait|any]
#   nvidia-gpu-discovery.sh [<amount>] --release [same flags]
#
# GPUs come from `nvidia-smi --query-gpu=index,uuid --format=csv,noheader` (one "<index>, <uuid>" per
# line, e.g. "0, GPU-3f5b2c1e-9a7d-4e0b-8c61-2d4f6a8b0c9e"). When CUDA_VISIBLE_DEVICES is set
# (non-empty) only the GPUs it lists are used (entries are indexes or GPU UUIDs). NVIDIA_VISIBLE_DEVICES
# is deliberately not read: it tells the NVIDIA container runtime which GPUs to put into a container
# (YARN's nvidia-docker-v2 plugin sets it to the host's indexes), and inside that container nvidia-smi
# already lists only those GPUs, renumbered from 0; outside a container it restricts nothing.
# For more than one GPU the set is chosen by the topology matrix of `nvidia-smi topo -m` (NVLink first;
# see "Topology" in gpu-discovery-common.sh).
# Coordination and the output contract: see gpu-discovery-common.sh next to this file.

VENDOR=NVIDIA
VISIBILITY_VARS=(CUDA_VISIBLE_DEVICES)
TOPOLOGY_COMMAND=(nvidia-smi topo -m)

list_gpus() {
	command -v nvidia-smi >/dev/null 2>&1 || {
		echo "nvidia-smi not found on PATH ($PATH); is the NVIDIA driver installed on this node?" >&2
		return 1
	}
	local out idx uuid
	out=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader) || return 1
	while IFS=', ' read -r idx uuid; do
		[[ -n $idx ]] || continue
		case $uuid in
		"" | "[N/A]" | N/A | "[Not Supported]") uuid="" ;;
		esac
		printf '%s %s\n' "$idx" "$uuid"
	done <<<"$out"
}

# read_health: sets sick_why[<uuid>] to "<field>=<value>" for each GPU whose health reads unhealthy now,
# by the rule of docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service (the sampler's,
# gpu.NVIDIAHealthFields): an uncorrected ECC error, a row remapping pending or failed, a page
# retirement pending, a hardware slowdown, or a value nvidia-smi cannot read ("[GPU is lost]", "ERR!");
# "[N/A]" and "[Not Supported]" are not sick. A field the driver does not know is asked by its older
# name or dropped. Fails with health_problem set when the health cannot be read (bounded: HEALTH_TIMEOUT
# seconds, MAX_HEALTH_BYTES).
read_health() {
	local -a fields=(ecc.errors.uncorrected.volatile.total remapped_rows.pending remapped_rows.failure retired_pages.pending clocks_event_reasons.hw_slowdown)
	local out rc tries f i line uuid v x sick
	command -v timeout >/dev/null 2>&1 || { health_problem="timeout(1) is not installed"; return 1; }
	for tries in 1 2 3 4 5 6 7; do
		[[ ${#fields[@]} -gt 0 ]] || { health_problem="nvidia-smi knows none of the health fields"; return 1; }
		{ out=$(
			set -o pipefail
			timeout -k 1 "$HEALTH_TIMEOUT" nvidia-smi "--query-gpu=uuid,$(join_by_comma "${fields[@]}")" --format=csv,noheader,nounits 2>&1 </dev/null | head -c $((MAX_HEALTH_BYTES + 1))
		); } 2>/dev/null
		rc=$?
		((${#out} <= MAX_HEALTH_BYTES)) || { health_problem="nvidia-smi printed more than $MAX_HEALTH_BYTES bytes"; return 1; }
		[[ $rc -ne 0 && $out =~ Field\ \"([A-Za-z0-9_.]+)\"\ is\ not\ a\ valid\ field ]] || break
		f=${BASH_REMATCH[1]}
		for i in "${!fields[@]}"; do
			if [[ ${fields[$i]} == "$f" ]]; then
				if [[ $f == clocks_event_reasons.hw_slowdown ]]; then
					fields[i]=clocks_throttle_reasons.hw_slowdown # its name before driver 535
				else
					unset 'fields[i]'
				fi
			fi
		done
		fields=("${fields[@]}")
	done
	if [[ $rc -ne 0 ]]; then
		IFS= read -r line <<<"$out"
		health_problem="nvidia-smi failed (exit status $rc): ${line:0:120}"
		return 1
	fi
	while IFS= read -r line; do
		IFS=, read -r -a v <<<"$line"
		[[ ${#v[@]} -eq $((${#fields[@]} + 1)) ]] || continue
		uuid=${v[0]//[[:space:]]/}
		for i in "${!fields[@]}"; do
			f=${fields[$i]} x=${v[$((i + 1))]}
			x=${x#"${x%%[![:space:]]*}"} x=${x%"${x##*[![:space:]]}"}
			case $x in
			"" | "[N/A]" | N/A | "[Not Supported]" | 0 | No | no | "Not Active") sick=0 ;;
			"ERR!" | "["*"]" | Yes | yes | 1 | Active) sick=1 ;;
			*) [[ $f == ecc.* && $x =~ ^[0-9]+$ ]] && sick=1 || sick=0 ;;
			esac
			if ((sick)); then
				sick_why[$uuid]="$f=$x"
				break
			fi
		done
	done <<<"$out"
}

# shellcheck source=gpu-discovery-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/gpu-discovery-common.sh"
