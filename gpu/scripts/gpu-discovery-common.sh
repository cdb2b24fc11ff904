#!/usr/bin/env bash
# yarn-am GPU discovery: the part shared by the vendor scripts (nvidia-gpu-discovery.sh,
# amd-gpu-discovery.sh). A vendor script defines three things and then sources this file:
#
#   VENDOR                 a word for messages ("NVIDIA", "AMD")
#   list_gpus              prints the indexes of the machine's GPUs, one per line (exit != 0 on failure)
#   VISIBILITY_VARS        names of the variables that restrict the usable GPUs, first set one wins
#
# Contract (drop-in compatible with Flink's discovery scripts):
#   <script> <amount> [--enable-coordination-mode | --enable-coordination] [--coordination-file PATH]
#   <script> [<amount>] --release [--coordination-file PATH]
# The first line of stdout is the comma-separated list of indexes; any failure exits non-zero with the
# reason on stderr.
#
# Coordination file format (one text file per host, rewritten in place under an exclusive flock(1) held
# for the whole read-modify-write; the file is never replaced, so every process locks the same inode):
#   # yarn-am gpu coordination v1: <index> <owner pid> <owner start time>
#   <index> <pid> <starttime>
# One line per claimed GPU. <starttime> is field 22 of /proc/<pid>/stat (clock ticks since boot), so a
# claim belongs to one process incarnation: a claim is alive only while a process with that pid AND that
# start time exists (and is not a zombie). Dead claims are dropped by the next caller. Lines that do not
# have this shape are ignored (and dropped on the next rewrite). The owner is the caller of the script
# ($PPID), i.e. the process that lives as long as the worker (yarn-am launch).

set -u

SCRIPT_NAME=${SCRIPT_NAME:-$(basename "$0")}

die() {
	printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2
	exit 1
}

# start_time PID: prints field 22 of /proc/PID/stat; fails if the process does not exist or is a zombie.
# The command name (field 2) may contain spaces and parentheses, so fields are counted after the last ')'.
start_time() {
	local line rest
	local -a f
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	rest=${line##*) }
	read -r -a f <<<"$rest"
	# f[0] is field 3 (state), so field 22 is f[19].
	[[ ${f[0]:-} != Z && ${f[0]:-} != X && -n ${f[19]:-} ]] || return 1
	printf '%s\n' "${f[19]}"
}

contains() { # contains WORD LIST...
	local w=$1 x
	shift
	for x in "$@"; do
		[[ $x == "$w" ]] && return 0
	done
	return 1
}

join_by_comma() {
	local IFS=,
	printf '%s' "$*"
}

# ---- arguments ----------------------------------------------------------------------------------------
amount=""
coordinate=0
release=0
coordination_file=""
if [[ $# -gt 0 && $1 != --* ]]; then
	amount=$1
	shift
fi
while [[ $# -gt 0 ]]; do
	case $1 in
	--enable-coordination-mode | --enable-coordination) coordinate=1 ;;
	--coordination-file)
		[[ $# -ge 2 && -n $2 ]] || die "--coordination-file needs a path"
		coordination_file=$2
		shift
		;;
	--coordination-file=*)
		coordination_file=${1#--coordination-file=}
		[[ -n $coordination_file ]] || die "--coordination-file needs a path"
		;;
	--release) release=1 ;;
	*) die "unknown argument \"$1\"; valid: <amount> [--enable-coordination-mode|--enable-coordination] [--coordination-file PATH] [--release]" ;;
	esac
	shift
done

if [[ $release -eq 0 ]]; then
	[[ $amount =~ ^[1-9][0-9]*$ ]] || die "amount \"$amount\" is not a positive integer; usage: $SCRIPT_NAME <amount> [args...]"
fi
if [[ -z $coordination_file ]]; then
	coordination_file=/var/tmp/yarn-am-gpu-coordination${NM_HOST:+-$NM_HOST}
fi

# ---- release mode ---------------------------------------------------------------------------------------
owner=$PPID

open_locked() {
	# Open (creating it readable and writable by every user of the host: co-located containers may run as
	# different users) and take the exclusive lock; it is held until the script exits.
	if [[ ! -e $coordination_file ]]; then
		(umask 000 && : >>"$coordination_file") 2>/dev/null
	fi
	{ exec {lock_fd}<>"$coordination_file"; } 2>/dev/null || die "cannot open coordination file $coordination_file (check that it is readable and writable by this user)"
	flock -x "$lock_fd" || die "cannot lock coordination file $coordination_file"
}

# read_claims: fills claim_idx/claim_pid/claim_st with the live claims, dropping the caller's own when
# releasing.
read_claims() {
	claim_idx=()
	claim_pid=()
	claim_st=()
	local idx pid st extra cur
	while read -r idx pid st extra; do
		[[ $idx =~ ^[0-9A-Za-z._:-]+$ && $pid =~ ^[0-9]+$ && $st =~ ^[0-9]+$ && -z ${extra:-} ]] || continue
		cur=$(start_time "$pid") || continue
		[[ $cur == "$st" ]] || continue # pid reused by another process: the claim is dead
		if [[ $release -eq 1 && $pid == "$owner" && $st == "$owner_start" ]]; then
			released+=("$idx")
			continue
		fi
		claim_idx+=("$idx")
		claim_pid+=("$pid")
		claim_st+=("$st")
	done <"$coordination_file"
}

write_claims() {
	local i out="# yarn-am gpu coordination v1: <index> <owner pid> <owner start time>"$'\n'
	for i in "${!claim_idx[@]}"; do
		out+="${claim_idx[$i]} ${claim_pid[$i]} ${claim_st[$i]}"$'\n'
	done
	printf '%s' "$out" >"$coordination_file" || die "cannot write coordination file $coordination_file"
}

owner_start=""
if [[ $coordinate -eq 1 || $release -eq 1 ]]; then
	owner_start=$(start_time "$owner") || die "cannot read the start time of the calling process $owner from /proc/$owner/stat"
fi

released=()
if [[ $release -eq 1 ]]; then
	if [[ -e $coordination_file ]]; then
		open_locked
		read_claims
		write_claims
	fi
	join_by_comma "${released[@]}"
	printf '\n'
	exit 0
fi

# ---- discovery ------------------------------------------------------------------------------------------
gpus_out=$(list_gpus) || die "could not list the ${VENDOR} GPUs of this machine"
all=()
while read -r g; do
	g=${g//[[:space:]]/}
	[[ -n $g ]] || continue
	contains "$g" "${all[@]}" || all+=("$g")
done <<<"$gpus_out"

# Visibility restriction: the first set (non-empty) variable of VISIBILITY_VARS restricts the GPUs to the
# ones it lists (by index, or for NVIDIA by UUID through gpu_uuid_to_index when defined).
restricted_by=""
for v in "${VISIBILITY_VARS[@]}"; do
	val=${!v:-}
	[[ -n $val ]] || continue
	restricted_by="$v=$val"
	case ${val,,} in
	all) ;;
	none | void | nodevfiles) all=() ;;
	*)
		allowed=()
		IFS=, read -r -a wanted <<<"$val"
		for w in "${wanted[@]}"; do
			w=${w//[[:space:]]/}
			[[ -n $w ]] || continue
			if [[ ! $w =~ ^[0-9]+$ ]] && declare -F gpu_uuid_to_index >/dev/null; then
				w=$(gpu_uuid_to_index "$w") || continue
			fi
			contains "$w" "${all[@]}" && ! contains "$w" "${allowed[@]}" && allowed+=("$w")
		done
		all=("${allowed[@]}")
		;;
	esac
	break
done
found_text="found ${#all[@]} ${VENDOR} GPU(s) [$(join_by_comma "${all[@]}")]${restricted_by:+ (restricted by $restricted_by)}"

if [[ $coordinate -eq 0 ]]; then
	[[ ${#all[@]} -ge $amount ]] || die "not enough GPUs: $found_text, asked for $amount"
	join_by_comma "${all[@]:0:amount}"
	printf '\n'
	exit 0
fi

open_locked
read_claims
free=()
taken=()
for g in "${all[@]}"; do
	owned_by=""
	for i in "${!claim_idx[@]}"; do
		if [[ ${claim_idx[$i]} == "$g" ]]; then
			owned_by="pid ${claim_pid[$i]}"
			break
		fi
	done
	if [[ -n $owned_by ]]; then
		taken+=("$g by $owned_by")
	else
		free+=("$g")
	fi
done
if [[ ${#free[@]} -lt $amount ]]; then
	taken_text=""
	for t in "${taken[@]}"; do
		taken_text+="${taken_text:+, }$t"
	done
	die "not enough GPUs: $found_text, asked for $amount, ${#free[@]} free; taken (coordination file $coordination_file): ${taken_text:-none}"
fi
mine=("${free[@]:0:amount}")
for g in "${mine[@]}"; do
	claim_idx+=("$g")
	claim_pid+=("$owner")
	claim_st+=("$owner_start")
done
write_claims
join_by_comma "${mine[@]}"
printf '\n'
