#!/usr/bin/env bash
# yarn-am GPU discovery for AMD GPUs (the default script of the gpu driver with vendor=amd).
#
#   amd-gpu-discovery.sh <amount> [--enable-coordination-mode | --enable-coordination]
#                        [--coordination-dir DIR] [--lock-timeout SECONDS]
#   amd-gpu-discovery.sh [<amount>] --release [--coordination-dir DIR] [--lock-timeout SECONDS]
#
# Indexes come from `rocm-smi --showid`: every line that starts with GPU[<n>] names the GPU with index
# <n> (the index HIP_VISIBLE_DEVICES uses); other lines (banners, separators) are ignored and repeated
# indexes are counted once. When HIP_VISIBLE_DEVICES is set (non-empty) only the GPUs it lists are used,
# else ROCR_VISIBLE_DEVICES (entries are indexes).
# Coordination and the output contract: see gpu-discovery-common.sh next to this file.

VENDOR=AMD
VISIBILITY_VARS=(HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES)

list_gpus() {
	command -v rocm-smi >/dev/null 2>&1 || {
		echo "rocm-smi not found on PATH ($PATH); is ROCm installed on this node?" >&2
		return 1
	}
	local out line
	out=$(rocm-smi --showid) || return 1
	while read -r line; do
		[[ $line =~ ^GPU\[([0-9]+)\] ]] && printf '%s\n' "${BASH_REMATCH[1]}"
	done <<<"$out"
	return 0
}

# shellcheck source=gpu-discovery-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/gpu-discovery-common.sh"
