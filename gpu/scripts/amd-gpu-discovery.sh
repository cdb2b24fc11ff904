#!/usr/bin/env bash
# yarn-am GPU discovery for AMD GPUs (the default script of the gpu driver with vendor=amd).
#
#   amd-gpu-discovery.sh <amount> [--enable-coordination-mode | --enable-coordination | --no-coordination]
#                        [--coordination-dir DIR | --coordination-file FILE] [--lock-timeout SECONDS]
#                        [--topology connected|prefer|wait|any]
#   amd-gpu-discovery.sh [<amount>] --release [same flags]
#
# Indexes come from `rocm-smi --showid`: every line that starts with GPU[<n>] names the GPU with index
# <n> (the index HIP_VISIBLE_DEVICES uses); other lines (banners, separators) are ignored and repeated
# indexes are counted once. UUIDs come from `rocm-smi --showuniqueid` ("GPU[<n>] : Unique ID: <id>"); a
# GPU whose unique id is N/A, or a rocm-smi without that option, is claimed by its index. When
# HIP_VISIBLE_DEVICES is set (non-empty) only the GPUs it lists are used, else ROCR_VISIBLE_DEVICES
# (entries are indexes or unique ids).
# No GPU topology is read (no TOPOLOGY_COMMAND): the first free GPUs are taken whatever --topology says.
# Coordination and the output contract: see gpu-discovery-common.sh next to this file.

VENDOR=AMD
VISIBILITY_VARS=(HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES)

list_gpus() {
	command -v rocm-smi >/dev/null 2>&1 || {
		echo "rocm-smi not found on PATH ($PATH); is ROCm installed on this node?" >&2
		return 1
	}
	local out ids="" line
	local -A uid=()
	out=$(rocm-smi --showid) || return 1
	ids=$(rocm-smi --showuniqueid 2>/dev/null) || ids=""
	while read -r line; do
		if [[ $line =~ ^GPU\[([0-9]+)\][[:space:]]*:[[:space:]]*Unique\ ID:[[:space:]]*([^[:space:]]+) ]]; then
			case ${BASH_REMATCH[2]} in
			N/A | "[N/A]") ;;
			*) uid[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]} ;;
			esac
		fi
	done <<<"$ids"
	while read -r line; do
		[[ $line =~ ^GPU\[([0-9]+)\] ]] && printf '%s %s\n' "${BASH_REMATCH[1]}" "${uid[${BASH_REMATCH[1]}]:-}"
	done <<<"$out"
	return 0
}

# shellcheck source=gpu-discovery-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/gpu-discovery-common.sh"
