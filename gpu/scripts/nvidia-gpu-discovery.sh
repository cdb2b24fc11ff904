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

# shellcheck source=gpu-discovery-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/gpu-discovery-common.sh"
