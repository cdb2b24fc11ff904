#!/usr/bin/env bash
# yarn-am GPU discovery for NVIDIA GPUs (the default script of the gpu driver, vendor=nvidia).
#
#   nvidia-gpu-discovery.sh <amount> [--enable-coordination-mode | --enable-coordination]
#                           [--coordination-dir DIR] [--lock-timeout SECONDS]
#   nvidia-gpu-discovery.sh [<amount>] --release [--coordination-dir DIR] [--lock-timeout SECONDS]
#
# Indexes come from `nvidia-smi --query-gpu=index --format=csv,noheader` (one index per line). When
# CUDA_VISIBLE_DEVICES is set (non-empty) only the GPUs it lists are used (entries are indexes or GPU
# UUIDs). NVIDIA_VISIBLE_DEVICES is deliberately not read: it tells the NVIDIA container runtime which
# GPUs to put into a container (YARN's nvidia-docker-v2 plugin sets it to the host's indexes), and inside
# that container nvidia-smi already lists only those GPUs, renumbered from 0; outside a container it
# restricts nothing.
# Coordination and the output contract: see gpu-discovery-common.sh next to this file.

VENDOR=NVIDIA
VISIBILITY_VARS=(CUDA_VISIBLE_DEVICES)

list_gpus() {
	command -v nvidia-smi >/dev/null 2>&1 || {
		echo "nvidia-smi not found on PATH ($PATH); is the NVIDIA driver installed on this node?" >&2
		return 1
	}
	nvidia-smi --query-gpu=index --format=csv,noheader
}

# gpu_uuid_to_index UUID: the index of the GPU with that UUID (for UUIDs in the visibility variables).
gpu_uuid_to_index() {
	local idx uuid
	while IFS=', ' read -r idx uuid; do
		if [[ $uuid == "$1" ]]; then
			printf '%s\n' "$idx"
			return 0
		fi
	done < <(nvidia-smi --query-gpu=index,uuid --format=csv,noheader 2>/dev/null)
	return 1
}

# shellcheck source=gpu-discovery-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/gpu-discovery-common.sh"
