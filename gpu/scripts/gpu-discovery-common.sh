#!/usr/bin/env bash
# yarn-am GPU discovery: the part shared by the vendor scripts (nvidia-gpu-discovery.sh,
# amd-gpu-discovery.sh). A vendor script defines three things and then sources this file:
#
#   VENDOR                 a word for messages ("NVIDIA", "AMD")
#   list_gpus              prints the machine's GPUs, one per line: "<index>" or "<index> <uuid>"
#                          (exit != 0 on failure; a GPU without a usable UUID is claimed by its index)
#   VISIBILITY_VARS        names of the variables that restrict the usable GPUs, first set one wins
#   TOPOLOGY_COMMAND       optional: the command that prints the GPU topology matrix in the format of
#                          `nvidia-smi topo -m` (see "Topology" below); without it no topology is read
#   read_health            optional: sets sick_why[<uuid>]="<field>=<value>" for each GPU that reads
#                          unhealthy now (fails when the health cannot be read); see "Sick GPUs" below
#
# Contract (the calling convention of Flink's discovery scripts, see docs/gpus.md#discovery-script-contract):
#   <script> <amount> [--enable-coordination-mode | --enable-coordination | --no-coordination]
#            [--coordination-dir DIR | --coordination-file FILE] [--lock-timeout SECONDS]
#            [--topology connected|prefer|wait|any]
#   <script> [<amount>] --release [same flags]
#   <script> [<amount>] --mark-sick <uuid> [same flags]
# The first line of stdout is the comma-separated list of indexes; a second line "uuids=U1,U2,..." gives
# the UUID of each of them (empty where the vendor tool has none). Any failure exits non-zero with the
# reason on stderr; lines on stderr of a successful run are warnings the driver logs.
#
# Coordination is on unless --no-coordination is given (docs/gpus.md#coordination-co-located-workers-never-share-a-gpu).
# Where the claims are kept, first match wins:
#   --coordination-dir DIR   DIR (created mode 0700 if missing)
#   --coordination-file FILE FILE.d when FILE's directory is writable by no other user (created mode
#                            0700 if missing); otherwise as if it were not given (a name in a directory
#                            others can write, such as Flink's /var/tmp, can be taken first by any of them)
#   /var/lib/yarn-am/gpu     when it exists: the shared directory an administrator creates once per node
#                              install -d -m 3770 -o root -g <group of the container users> /var/lib/yarn-am/gpu
#   a private directory      yarn-am-gpu in the first of $LOCAL_USER_DIRS (YARN's per-user directory on the
#                            node), else in $XDG_RUNTIME_DIR, else /tmp/yarn-am-gpu-<uid>; it covers the
#                            caller's own containers only, and says so once (a marker file in it).
# Without an explicit coordination flag, a node where coordination cannot work (no usable private
# directory, /proc with hidepid) gets a warning and uncoordinated discovery; with one it is an error.
#
# The directory is refused when it is a symbolic link, writable by every user, group-writable without
# the sticky bit, or owned by a user other than root and the caller.
#
# Claim files are named claims.<uid>@<NM_HOST>.<random> (NM_HOST empty outside YARN): the random part
# comes from mktemp (O_EXCL), so no one can create a user's file before that user does. A file counts as
# <uid>'s only when <uid> owns it; everything else (symbolic links, non-regular files, files owned by
# another uid than their name says, files over 16 KiB or 64 claims, more than 4 files of one uid) is
# skipped with a warning naming it, never an error: a member can spoil only its own claims. Lines:
#   # yarn-am gpu coordination v3: <gpu> <owner pid> <owner start time>
#   uuid:<UUID> <pid> <starttime>      a GPU claimed by its UUID
#   index:<n> <pid> <starttime>        a GPU whose vendor tool gave no UUID, claimed by its index
#   <n> <pid> <starttime>              the same (version 2 files, named claims.<uid>[@<NM_HOST>])
#   sick uuid:<UUID> <unix time>       a GPU the user's sampler read unhealthy (see "Sick GPUs" below)
# An index claim blocks the GPU with that index whatever its UUID. Under YARN's GPU isolation every
# container lists its own GPUs from index 0, so only UUID claims tell them apart.
# A user's claims are only ever replaced by that user: a fresh file (mktemp) with the live claims, then
# the user's older files removed; no process opens another user's file for writing. All claim files are
# read, and the caller's own rewritten, under one exclusive flock(1) on the directory itself (opened
# read-only). <starttime> is field 22 of /proc/<pid>/stat: a claim is alive only while a process with
# that pid AND that start time exists, is not a zombie, and belongs to the owner of the claim file. The
# owner of a claim is the caller of the script ($PPID), the process that lives as long as the worker
# (yarn-am launch).
#
# Topology (docs/gpus.md#topology-connected-sets): for an amount k > 1 the set is chosen from the GPU
# topology matrix (TOPOLOGY_COMMAND, read before the lock, at most 64 KiB within 5 s): among the free
# GPUs, the first set (in listing order) whose every pair is linked by NVLink (NV#), else by the best
# PCIe level (PIX, then PXB, PHB, NODE, SYS), a set within one NUMA node (the matrix's NUMA Affinity
# column) before one across nodes at each level. --topology prefer (the default) takes that set and
# warns when it is worse than the node's best set of k; connected fails when no NVLink-connected set is
# free; wait waits for one, up to --lock-timeout seconds in all, without holding the lock while it
# sleeps (it fails at once on a node that has no NVLink-connected set of k); any reads no topology.
# k = 1, or a matrix that cannot be read or parsed (a warning), chooses as without topology: the first
# k free GPUs. A line "topology=<link>[/<best>];<gpu>:<numa>:<cells>;..." on stdout after the UUIDs
# says what was read (yarn-am discover prints it); /<best>, the link of the node's best set of k, is
# there when the set taken is worse.
#
# Sick GPUs (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service): --mark-sick <uuid> (the
# launcher runs it when its sampler reads one of its GPUs unhealthy) adds a line "sick uuid:<UUID>
# <time>" to the caller's claim file, under the lock; it outlives the caller (it is no claim of a
# process). Discovery skips a GPU any valid claim file of the node marks sick, whoever wrote it, while
# the GPU still reads unhealthy (read_health, one bounded vendor-tool call made only when a mark names
# one of the GPUs) or its health cannot be read; once it reads healthy it is handed out again and the
# caller's own marks of it are dropped. A vendor script without read_health honours a mark for
# SICK_MARK_TTL seconds. Older scripts ignore sick lines (they are no claims).

set -u

SCRIPT_NAME=${SCRIPT_NAME:-$(basename "$0")}

die() {
	printf '%s: %s\n' "$SCRIPT_NAME" "$*" >&2
	exit 1
}

warn() {
	printf '%s: warning: %s\n' "$SCRIPT_NAME" "$*" >&2
}

# Bounds of the work done under the lock (docs/gpus.md#how-it-works).
MAX_CLAIM_BYTES=16384
MAX_CLAIM_LINES=64
MAX_FILES_PER_UID=4
MAX_SKIP_REPORTS=5
# How long a sick mark holds where the vendor script cannot read the GPUs' health (no read_health).
SICK_MARK_TTL=3600
HEALTH_TIMEOUT=5
MAX_HEALTH_BYTES=65536
# Bounds of the topology read (docs/gpus.md#topology-connected-sets).
MAX_TOPO_BYTES=65536
MAX_TOPO_GPUS=16
TOPO_TIMEOUT=5

# start_time PID: sets started to field 22 of /proc/PID/stat; fails if the process does not exist or is
# a zombie. The command name (field 2) may contain spaces and parentheses, so fields are counted after
# the last ')'. Results go to variables, not stdout: no subshell per claim under the lock.
start_time() {
	local line rest
	local -a f
	started=""
	[[ $1 =~ ^[0-9]{1,10}$ ]] || return 1
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	rest=${line##*) }
	read -r -a f <<<"$rest"
	# f[0] is field 3 (state), so field 22 is f[19].
	[[ ${f[0]:-} != Z && ${f[0]:-} != X && -n ${f[19]:-} ]] || return 1
	started=${f[19]}
}

# proc_uid PID: sets puid to the real uid of PID, from /proc/PID/status.
proc_uid() {
	local k v rest
	puid=""
	while read -r k v rest; do
		if [[ $k == Uid: ]]; then
			puid=$v
			return 0
		fi
	done 2>/dev/null <"/proc/$1/status"
	return 1
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
DEFAULT_COORDINATION_DIR=/var/lib/yarn-am/gpu
amount=""
coordinate=auto # auto: on by default, softened where it cannot work; 1: asked for; 0: --no-coordination
release=0
mark_sick="" # --mark-sick: the UUID of a GPU to record as sick
coordination_dir=""
coordination_file=""
lock_timeout=30
topology=prefer
valid_args="<amount> [--enable-coordination-mode|--enable-coordination|--no-coordination] [--coordination-dir DIR|--coordination-file FILE] [--lock-timeout SECONDS] [--topology connected|prefer|wait|any] [--release | --mark-sick UUID]"
if [[ $# -gt 0 && $1 != --* ]]; then
	amount=$1
	shift
fi
while [[ $# -gt 0 ]]; do
	case $1 in
	--enable-coordination-mode | --enable-coordination)
		[[ $coordinate != 0 ]] || die "$1 contradicts --no-coordination; valid: $valid_args"
		coordinate=1
		;;
	--no-coordination)
		[[ $coordinate != 1 ]] || die "--no-coordination contradicts an --enable-coordination flag; valid: $valid_args"
		coordinate=0
		;;
	--coordination-dir | --lock-timeout | --coordination-file | --topology | --mark-sick)
		[[ $# -ge 2 && -n $2 ]] || die "$1 needs a value; valid: $valid_args"
		case $1 in
		--coordination-dir) coordination_dir=$2 ;;
		--mark-sick) mark_sick=$2 ;;
		--coordination-file) coordination_file=$2 ;;
		--topology) topology=$2 ;;
		*) lock_timeout=$2 ;;
		esac
		shift
		;;
	--coordination-dir=*) coordination_dir=${1#*=} ;;
	--coordination-file=*) coordination_file=${1#*=} ;;
	--lock-timeout=*) lock_timeout=${1#*=} ;;
	--topology=*) topology=${1#*=} ;;
	--mark-sick=*) mark_sick=${1#*=} ;;
	--release) release=1 ;;
	*) die "unknown argument \"$1\"; valid: $valid_args" ;;
	esac
	shift
done

if [[ -n $mark_sick ]]; then
	[[ $release -eq 0 ]] || die "--mark-sick with --release: give one; valid: $valid_args"
	[[ $mark_sick =~ ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}$ ]] || die "--mark-sick \"${mark_sick:0:40}\" is not a GPU UUID (letters, digits, _ . : -)"
elif [[ $release -eq 0 ]]; then
	[[ $amount =~ ^[1-9][0-9]{0,5}$ ]] || die "amount \"$amount\" is not a positive integer; usage: $SCRIPT_NAME $valid_args"
fi
[[ -z $coordination_dir || -z $coordination_file ]] || die "--coordination-dir and --coordination-file both name where the claims are kept; give one"
if [[ $coordinate == 0 && (-n $coordination_dir || -n $coordination_file) ]]; then
	die "--no-coordination with --coordination-dir or --coordination-file: the place has no effect without coordination"
fi
# Naming a place (Flink's --coordination-file included) asks for coordination. Without any flag it is on
# in YARN containers (CONTAINER_ID is set in every one) and off elsewhere ('yarn-am discover', a launcher
# started by hand), where there are no co-located workers to keep apart.
[[ -z $coordination_dir && -z $coordination_file ]] || coordinate=1
[[ $coordinate != auto || -n ${CONTAINER_ID:-} ]] || coordinate=0
# A trailing slash would make the symbolic-link checks below follow a link: drop it.
while [[ $coordination_dir == ?*/ ]]; do coordination_dir=${coordination_dir%/}; done
while [[ $coordination_file == ?*/ ]]; do coordination_file=${coordination_file%/}; done
[[ -z $coordination_dir || $coordination_dir == /* ]] || die "--coordination-dir \"$coordination_dir\" is not an absolute path (workers on one node must name the same directory)"
[[ -z $coordination_file || $coordination_file == /* ]] || die "--coordination-file \"$coordination_file\" is not an absolute path (workers on one node must name the same file)"
[[ $lock_timeout =~ ^[1-9][0-9]{0,3}$ ]] || die "--lock-timeout \"$lock_timeout\" is not a whole number of seconds between 1 and 9999"
case $topology in
connected | prefer | wait | any) ;;
*) die "--topology \"${topology:0:40}\" is not one of connected, prefer (the default), wait, any" ;;
esac

# ---- coordination ---------------------------------------------------------------------------------------
owner=$PPID
me=$EUID
# Claims are kept per NodeManager (NM_HOST, set by YARN in every container): on a real cluster that is
# one set per host; the mini cluster's NodeManagers share one machine but model separate hosts.
host=${NM_HOST:-}
if [[ -n $host ]]; then
	[[ $host =~ ^[A-Za-z0-9._-]{1,253}$ ]] || die "NM_HOST \"${host:0:60}\" is not a host name (letters, digits, . _ -)"
fi
admin_hint_for() { # admin_hint_for DIR: sets admin_hint to how the shared directory DIR is made
	admin_hint="an administrator creates it once per node: install -d -m 3770 -o root -g <group of the users running containers> $1"
}
admin_hint_for "$DEFAULT_COORDINATION_DIR"
private=0 # 1: the claims are in a directory of the caller's own (no other user takes part)

# coord_off REASON: coordination cannot work here. An explicit flag makes that an error; by default the
# script warns and hands out GPUs without claims.
coord_off() {
	[[ $coordinate == auto ]] || die "$1"
	if [[ $release -eq 1 || -n $mark_sick ]]; then
		printf '\n' # discovery ran without claims too: nothing to release
		exit 0
	fi
	warn "GPU coordination is off for this worker: $1; co-located workers may get the same GPU (pass --no-coordination to say that is intended, or see docs/gpus.md#coordination-co-located-workers-never-share-a-gpu)"
	coordinate=0
}

# safe_parent DIR: DIR is a real directory (not a link) owned by root or the caller that no other user
# can write, so a name in it cannot be taken first by someone else.
safe_parent() {
	local st mode uid
	[[ -d $1 && ! -L $1 ]] || return 1
	st=$(stat -c '%a %u' -- "$1" 2>/dev/null) || return 1
	read -r mode uid <<<"$st"
	mode=$((8#$mode))
	[[ ($uid == 0 || $uid == "$me") && $((mode & 8#0022)) -eq 0 ]]
}

# private_dir: prints the caller's private coordination directory: in YARN's per-user directory of this
# node (the first of LOCAL_USER_DIRS, else the usercache/<user> above the container's working
# directory), else in XDG_RUNTIME_DIR, else /tmp/yarn-am-gpu-<uid>.
private_dir() {
	local base
	IFS=, read -r base _ <<<"${LOCAL_USER_DIRS:-}"
	base=${base%/}
	if [[ -z $base && $PWD =~ ^(/.*/usercache/[^/]+)/appcache/[^/]+/[^/]+$ ]]; then
		base=${BASH_REMATCH[1]}
	fi
	if [[ -n $base ]] && safe_parent "$base"; then
		printf '%s\n' "$base/yarn-am-gpu"
		return 0
	fi
	base=${XDG_RUNTIME_DIR:-}
	base=${base%/}
	if [[ -n $base ]] && safe_parent "$base"; then
		printf '%s\n' "$base/yarn-am-gpu"
		return 0
	fi
	printf '%s\n' "/tmp/yarn-am-gpu-$me"
}

# resolve_dir: sets coordination_dir (see the top of this file) and private.
resolve_dir() {
	if [[ -n $coordination_dir ]]; then
		return 0
	fi
	if [[ -n $coordination_file ]]; then
		local parent=${coordination_file%/*}
		[[ -n $parent ]] || parent=/
		if safe_parent "$parent" && { [[ -e $coordination_file.d ]] || [[ -w $parent ]]; }; then
			coordination_dir=$coordination_file.d
			return 0
		fi
	fi
	if [[ -e $DEFAULT_COORDINATION_DIR || -L $DEFAULT_COORDINATION_DIR ]]; then
		coordination_dir=$DEFAULT_COORDINATION_DIR
	else
		coordination_dir=$(private_dir)
		private=1
	fi
	if [[ -n $coordination_file && $release -eq 0 ]]; then
		warn "--coordination-file $coordination_file: its directory is writable by other users (or not by you), so a name there could be taken first by someone else; the claims go to $coordination_dir instead (docs/gpus.md#flinks---coordination-file)"
	fi
}

# bad_dir REASON: the coordination directory cannot be used. The private directory is the caller's own
# business (coord_off); a directory named or made by an administrator is an error.
bad_dir() {
	if [[ $private -eq 1 ]]; then
		coord_off "$1"
		return 1
	fi
	die "$1"
}

# check_dir: the coordination directory must be one that only the caller, root and (with the sticky bit)
# the members of its group can write. Returns 1 (after coord_off) when a private directory is unusable.
check_dir() {
	local d=$coordination_dir st mode owner_uid
	[[ ! -L $d ]] || { bad_dir "coordination directory $d is a symbolic link; refusing it (a link can be redirected by whoever owns it): use the real directory"; return 1; }
	if [[ ! -e $d && $d != "$DEFAULT_COORDINATION_DIR" ]]; then
		# A directory named explicitly, or the private one, is created private to the caller; mkdir fails
		# on anything already there, a symbolic link included, and the checks below then judge what is
		# there. The shared directory is an administrator's to create.
		mkdir -m 0700 -- "$d" 2>/dev/null
	fi
	if [[ ! -e $d ]]; then
		[[ $private -eq 0 ]] || { bad_dir "cannot create the private coordination directory $d as uid $me"; return 1; }
		die "coordination directory $d does not exist; $admin_hint; or pass --coordination-dir with a directory of your own (created mode 0700 if missing) when all containers run as one user"
	fi
	[[ -d $d ]] || { bad_dir "coordination directory $d is not a directory"; return 1; }
	st=$(stat -c '%a %u %g' -- "$d") || { bad_dir "cannot stat coordination directory $d"; return 1; }
	read -r mode owner_uid dir_gid <<<"$st"
	mode=$((8#$mode))
	if ((mode & 8#0002)); then
		bad_dir "coordination directory $d is writable by every user (mode $(printf '%04o' "$mode")): anyone could remove or hold the claims; refusing it; $admin_hint" || return 1
	fi
	if ((mode & 8#0020 && !(mode & 8#1000))); then
		bad_dir "coordination directory $d is group-writable without the sticky bit (mode $(printf '%04o' "$mode")): a group member could remove other users' claim files; refusing it; fix: chmod 3770 $d" || return 1
	fi
	if [[ $owner_uid != 0 && $owner_uid != "$me" ]]; then
		bad_dir "coordination directory $d is owned by uid $owner_uid, neither root nor you (uid $me): its owner could remove every claim; refusing it; fix: chown root $d" || return 1
	fi
	dir_shared=$((mode & 8#0070))
	# Said once per node and user: the first to create the marker (O_EXCL through noclobber) says it.
	if [[ $private -eq 1 && $release -eq 0 && ! -e $d/.warned ]] && (set -C && : >"$d/.warned") 2>/dev/null; then
		warn "GPU coordination covers only uid $me's own containers on this node (in $d): $DEFAULT_COORDINATION_DIR does not exist, so containers of other users may get the same GPUs; $admin_hint (said once per node and user)"
	fi
	return 0
}

# lock_holders: "pid P (user U)" for every process holding a flock on the inode of the directory.
lock_holders() {
	local ino out="" n typ adv rw pid dev rest user
	ino=$(stat -L -c %i -- "$coordination_dir" 2>/dev/null) || return 0
	while read -r n typ adv rw pid dev rest; do
		[[ $typ == FLOCK && ${dev##*:} == "$ino" ]] || continue
		if user=$(stat -c %U "/proc/$pid" 2>/dev/null); then
			out+="${out:+, }pid $pid (user $user)"
		else
			out+="${out:+, }pid $pid (exited; a process that inherited its descriptor holds the lock)"
		fi
	done </proc/locks
	printf '%s' "${out:-unknown (not visible from here)}"
}

# check_proc: claims are judged alive by their owner's /proc entry, so other users' processes must be
# visible. /proc mounted with hidepid (other than 0/off) hides them unless the caller is in its gid=
# group; their claims would then look dead and their GPUs free. Returns 1 when coordination is off.
check_proc() {
	[[ $me -ne 0 ]] || return 0
	local line opts="" o hp="" pgid=""
	local -a f
	while read -r line; do
		read -r -a f <<<"$line"
		[[ ${f[4]:-} == /proc && $line == *" - proc "* ]] && opts=${f[${#f[@]} - 1]}
	done </proc/self/mountinfo # the last /proc mount is the one in effect
	for o in ${opts//,/ }; do
		case $o in
		hidepid=*) hp=${o#hidepid=} ;;
		gid=*) pgid=${o#gid=} ;;
		esac
	done
	[[ -z $hp || $hp == 0 || $hp == off ]] && return 0
	[[ -n $pgid ]] && contains "$pgid" $(id -G) && return 0
	coord_off "/proc is mounted with hidepid=$hp${pgid:+,gid=$pgid}: this script cannot see other users' processes and would take their GPU claims for dead; coordination needs /proc without hidepid, or with gid=<the coordination directory's group>"
	return 1
}

# open_locked [SECONDS]: opens the directory read-only and takes the exclusive lock (waiting at most
# SECONDS, default --lock-timeout), held until the script exits or closes lock_fd.
open_locked() {
	local wait_s=${1:-$lock_timeout}
	{ exec {lock_fd}<"$coordination_dir"; } 2>/dev/null || die "cannot open coordination directory $coordination_dir as uid $me (groups: $(id -Gn 2>/dev/null)): the users running containers must be members of its group; $admin_hint"
	[[ $(stat -L -c '%d:%i' "/dev/fd/$lock_fd") == "$(stat -c '%d:%i' -- "$coordination_dir")" ]] ||
		die "coordination directory $coordination_dir changed while it was being opened; refusing it"
	flock -x -w "$wait_s" "$lock_fd" ||
		die "could not lock coordination directory $coordination_dir within $wait_s s: held by $(lock_holders); raise --lock-timeout or end the holder"
}

# skip FILE REASON: a claim file that is not valid is left alone and reported (a bounded number of times).
skipped_count=0
skip() {
	skipped_count=$((skipped_count + 1))
	if ((skipped_count <= MAX_SKIP_REPORTS)); then
		warn "skipped claim file $1: $2; its claims are ignored (an administrator may remove it)"
	fi
}

# claim_name_uid NAME: sets name_uid to the uid a claim file NAME belongs to when NAME is a claim file
# of this node (this version's claims.<uid>@<host>.<random> or version 2's claims.<uid>[@<host>]);
# fails for names of other nodes and for anything else. No subshell: it runs once per directory entry.
claim_name_uid() {
	local tail
	[[ $1 =~ ^claims\.([0-9]{1,10})(@.*)?$ ]] || return 1
	name_uid=${BASH_REMATCH[1]} tail=${BASH_REMATCH[2]}
	[[ $tail == "@$host."* && ${tail#"@$host."} =~ ^[A-Za-z0-9]{8}$ ]] && return 0
	[[ $tail == "${host:+@$host}" ]]
}

# read_claim_file FILE UID: appends the live claims of FILE (owned by UID) to claim_key/claim_pid/claim_st;
# the caller's own live claims go to mine_key/mine_pid/mine_st too (minus the released ones in release
# mode). Reads at most MAX_CLAIM_BYTES, without following a link and without blocking on a FIFO.
read_claim_file() {
	local f=$1 uid=$2 data key pid st extra n=0
	# (bash's own warning about NUL bytes in the data is not the caller's business)
	{ data=$(dd if="$f" iflag=nofollow,nonblock bs=$((MAX_CLAIM_BYTES + 1)) count=1 status=none 2>/dev/null); } 2>/dev/null || {
		skip "$f" "it cannot be read as uid $me (claim files are mode 0640, group of the directory)"
		return 0
	}
	if ((${#data} > MAX_CLAIM_BYTES)); then
		skip "$f" "it is larger than $MAX_CLAIM_BYTES bytes"
		return 0
	fi
	local -a keys=() pids=() sts=() sicks=() sick_ats=()
	while read -r key pid st extra; do
		[[ -n $key && $key != '#'* ]] || continue
		n=$((n + 1))
		if ((n > MAX_CLAIM_LINES)); then
			skip "$f" "it holds more than $MAX_CLAIM_LINES claims"
			return 0
		fi
		if [[ $key == sick ]]; then # "sick uuid:<UUID> <time>": no claim of a process
			if [[ $pid =~ ^uuid:[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}$ && $st =~ ^[0-9]{1,12}$ && -z ${extra:-} ]]; then
				sicks+=("$pid") sick_ats+=("$st")
			fi
			continue
		fi
		[[ $pid =~ ^[0-9]{1,10}$ && $st =~ ^[0-9]{1,20}$ && -z ${extra:-} ]] || continue
		if [[ $key =~ ^[0-9]{1,9}$ ]]; then
			key=index:$((10#$key))
		elif [[ $key =~ ^index:[0-9]{1,9}$ ]]; then
			key=index:$((10#${key#index:}))
		elif [[ ! $key =~ ^uuid:[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}$ ]]; then
			continue
		fi
		keys+=("$key") pids+=("$pid") sts+=("$st")
	done <<<"$data"
	local i
	for i in "${!sicks[@]}"; do
		sick_key+=("${sicks[$i]}") sick_at+=("${sick_ats[$i]}")
		[[ $uid != "$me" ]] || mine_sick_key+=("${sicks[$i]}") mine_sick_at+=("${sick_ats[$i]}")
	done
	for i in "${!keys[@]}"; do
		key=${keys[$i]} pid=${pids[$i]} st=${sts[$i]}
		if ! start_time "$pid"; then
			[[ -d /proc/$pid && ! -r /proc/$pid/stat ]] && die "cannot read /proc/$pid/stat (the owner of a claim in $f): is /proc mounted with hidepid? coordination needs to see every claim owner"
			continue # gone or a zombie: the claim is dead
		fi
		[[ $started == "$st" ]] || continue # pid reused by another process: the claim is dead
		proc_uid "$pid" || continue
		[[ $puid == "$uid" ]] || continue # a claim for another user's process: not this user's to make
		if [[ $uid == "$me" ]]; then
			if [[ $release -eq 1 && $pid == "$owner" && $st == "$owner_start" ]]; then
				released+=("$key")
				continue
			fi
			mine_key+=("$key")
			mine_pid+=("$pid")
			mine_st+=("$st")
		fi
		claim_key+=("$key")
		claim_pid+=("$pid")
		claim_st+=("$st")
	done
}

# read_claims: reads every claim file of this node in one listing; fills own_files with the caller's own
# files (to be replaced) and skips (with a warning) what is not valid.
read_claims() {
	claim_key=() claim_pid=() claim_st=() mine_key=() mine_pid=() mine_st=() own_files=()
	sick_key=() sick_at=() mine_sick_key=() mine_sick_at=()
	local typ fuid size name uid path
	local -A files_of=()
	local -a cand_path=() cand_uid=()
	while IFS=' ' read -r -d '' typ fuid size name; do
		claim_name_uid "$name" || continue # another node's, or not a claim file
		uid=$name_uid
		path=$coordination_dir/$name
		if [[ $typ != f ]]; then
			skip "$path" "it is not a regular file (type $typ)"
			[[ $fuid == "$me" && $uid == "$me" ]] && own_files+=("$path")
			continue
		fi
		if [[ $fuid != "$uid" ]]; then
			skip "$path" "it is owned by uid $fuid, not by uid $uid as its name says"
			continue
		fi
		[[ $uid == "$me" ]] && own_files+=("$path")
		if ((size > MAX_CLAIM_BYTES)); then
			skip "$path" "it is larger than $MAX_CLAIM_BYTES bytes ($size)"
			continue
		fi
		files_of[$uid]=$((${files_of[$uid]:-0} + 1))
		cand_path+=("$path") cand_uid+=("$uid")
	done < <(find "$coordination_dir" -mindepth 1 -maxdepth 1 -name 'claims.*' -printf '%y %U %s %f\0' 2>/dev/null)
	local i
	for i in "${!cand_path[@]}"; do
		uid=${cand_uid[$i]}
		if ((${files_of[$uid]} > MAX_FILES_PER_UID)); then
			skip "${cand_path[$i]}" "uid $uid has ${files_of[$uid]} claim files for this node, more than $MAX_FILES_PER_UID"
			continue
		fi
		read_claim_file "${cand_path[$i]}" "$uid"
	done
	((skipped_count <= MAX_SKIP_REPORTS)) || warn "skipped $((skipped_count - MAX_SKIP_REPORTS)) more claim file(s) in $coordination_dir"
}

# write_own_claims: writes mine_* and mine_sick_* to a fresh claim file (mktemp, so its name cannot be
# taken first) and then removes the caller's older files; nothing is written when no claim and no sick
# mark is left.
write_own_claims() {
	local i f tmp out="# yarn-am gpu coordination v3: <gpu> <owner pid> <owner start time>"$'\n'
	local -A seen=()
	tmp=""
	if [[ ${#mine_key[@]} -gt 0 || ${#mine_sick_key[@]} -gt 0 ]]; then
		for i in "${!mine_key[@]}"; do
			[[ -z ${seen[${mine_key[$i]} ${mine_pid[$i]}]:-} ]] || continue
			seen[${mine_key[$i]} ${mine_pid[$i]}]=1
			out+="${mine_key[$i]} ${mine_pid[$i]} ${mine_st[$i]}"$'\n'
		done
		for i in "${!mine_sick_key[@]}"; do
			[[ -z ${seen[sick ${mine_sick_key[$i]}]:-} ]] || continue
			seen[sick ${mine_sick_key[$i]}]=1
			out+="sick ${mine_sick_key[$i]} ${mine_sick_at[$i]}"$'\n'
		done
		tmp=$(umask 077 && mktemp -- "$coordination_dir/claims.$me@$host.XXXXXXXX") || die "cannot create a claim file in $coordination_dir as uid $me"
		if ! { printf '%s' "$out" >"$tmp" && chmod 0640 -- "$tmp" &&
			{ [[ $dir_shared -eq 0 ]] || chgrp -- "$dir_gid" "$tmp"; }; } 2>/dev/null; then
			rm -f -- "$tmp"
			die "cannot write claim file $tmp as uid $me (it must be a file of yours in a directory your group can write)"
		fi
	fi
	for f in "${own_files[@]}"; do
		[[ $f != "$tmp" ]] || continue
		rm -f -- "$f" 2>/dev/null || warn "cannot remove the old claim file $f"
	done
}

owner_start=""
released=()
if [[ $coordinate != 0 ]]; then
	resolve_dir
	[[ $private -eq 1 ]] || admin_hint_for "$coordination_dir"
	if check_proc && check_dir; then
		start_time "$owner" || die "cannot read the start time of the calling process $owner from /proc/$owner/stat"
		owner_start=$started
	fi
fi

# ---- release mode ---------------------------------------------------------------------------------------
if [[ $release -eq 1 ]]; then
	if [[ $coordinate != 0 ]] &&
		[[ -n $(find "$coordination_dir" -mindepth 1 -maxdepth 1 -name "claims.$me*" -user "$me" -print -quit 2>/dev/null) ]]; then
		open_locked
		read_claims
		write_own_claims
	fi
	released=("${released[@]#*:}") # the GPUs, by UUID or index
	join_by_comma "${released[@]}"
	printf '\n'
	exit 0
fi

# ---- mark-sick mode -------------------------------------------------------------------------------------
if [[ -n $mark_sick ]]; then
	if [[ $coordinate != 0 ]]; then
		open_locked
		read_claims
		kept_key=() kept_at=()
		for i in "${!mine_sick_key[@]}"; do
			[[ ${mine_sick_key[$i]} == "uuid:$mark_sick" ]] || kept_key+=("${mine_sick_key[$i]}") kept_at+=("${mine_sick_at[$i]}")
		done
		mine_sick_key=("${kept_key[@]}" "uuid:$mark_sick") mine_sick_at=("${kept_at[@]}" "$(date +%s)")
		write_own_claims
	fi
	exit 0
fi

# ---- discovery ------------------------------------------------------------------------------------------
gpus_out=$(list_gpus) || die "could not list the ${VENDOR} GPUs of this machine"
all=()
declare -A uuid_of=()
while read -r g u rest; do
	[[ -n $g ]] || continue
	[[ $g =~ ^[0-9]{1,9}$ ]] || die "the ${VENDOR} GPU listing printed \"${g:0:40}\", not a GPU index (a non-negative integer)"
	g=$((10#$g))
	contains "$g" "${all[@]}" && continue
	all+=("$g")
	if [[ -n $u ]]; then
		if [[ $u =~ ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,95}$ ]]; then
			uuid_of[$g]=$u
		else
			warn "the ${VENDOR} GPU listing gave GPU $g the UUID \"${u:0:40}\", which is not one (letters, digits, _ . : -); GPU $g is claimed by its index"
		fi
	fi
done <<<"$gpus_out"

# index_of UUID: the index of the GPU with that UUID.
index_of() {
	local g
	for g in "${all[@]}"; do
		[[ ${uuid_of[$g]:-} == "$1" ]] && printf '%s\n' "$g" && return 0
	done
	return 1
}

# Visibility restriction: the first set (non-empty) variable of VISIBILITY_VARS restricts the GPUs to the
# ones it lists (by index, or by UUID).
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
			if [[ $w =~ ^[0-9]{1,9}$ ]]; then
				w=$((10#$w))
			else
				w=$(index_of "$w") || continue
			fi
			contains "$w" "${all[@]}" && ! contains "$w" "${allowed[@]}" && allowed+=("$w")
		done
		all=("${allowed[@]}")
		;;
	esac
	break
done
found_text="found ${#all[@]} ${VENDOR} GPU(s) [$(join_by_comma "${all[@]}")]${restricted_by:+ (restricted by $restricted_by)}"

# print_result INDEX...: the output contract: indexes, then their UUIDs when the vendor tool gave any.
print_result() {
	local g any=0
	local -a uu=()
	for g in "$@"; do
		uu+=("${uuid_of[$g]:-}")
		[[ -z ${uuid_of[$g]:-} ]] || any=1
	done
	join_by_comma "$@"
	printf '\n'
	if [[ $any -eq 1 ]]; then
		printf 'uuids=%s\n' "$(join_by_comma "${uu[@]}")"
	fi
}

# ---- topology ------------------------------------------------------------------------------------------
# What read_topology fills: topo_gpus (the matrix's GPUs, in its order), topo_cell["i j"] (the link
# from GPU i to GPU j as printed), topo_rank["i j"] (the pair's worse direction: 1 NV#, 2 PIX, 3 PXB,
# 4 PHB, 5 NODE, 6 SYS), topo_numa[i] (its NUMA Affinity, "-" when not a node number).
declare -p TOPOLOGY_COMMAND >/dev/null 2>&1 || TOPOLOGY_COMMAND=()
topo_gpus=()
declare -A topo_cell=() topo_rank=() topo_numa=()
topo_problem=""
topo_best="" # the link of the node's best set of k, when the set taken is worse (print_topology)

# link_rank CELL: sets lrank to the rank of a matrix cell; fails for anything else.
link_rank() {
	case $1 in
	NV[0-9] | NV[0-9][0-9] | NV[0-9][0-9][0-9]) lrank=1 ;;
	PIX) lrank=2 ;;
	PXB) lrank=3 ;;
	PHB) lrank=4 ;;
	NODE) lrank=5 ;;
	SYS | SOC) lrank=6 ;; # SOC: older drivers' name of SYS
	*) return 1 ;;
	esac
}

# shown TEXT: a bounded, printable prefix of TEXT for a message.
shown() {
	local s=${1:0:80}
	printf '"%s"%s' "${s//[[:cntrl:]]/?}" "$([[ ${#1} -le 80 ]] || printf '...')"
}

# parse_topology TEXT: fills the topo_* variables from the matrix in TEXT; fails with topo_problem set.
# The header is the first line whose first word is GPU0 and whose second is not X (the real tool
# underlines it with escape sequences, which are dropped: at most 8 a line, so the work stays linear);
# a row is a line whose first word is GPU<n>; multi-word column names are joined first, so tabs and
# runs of spaces both separate cells. NIC rows and columns, the CPU Affinity column and the legend are
# not used.
parse_topology() {
	local line esc=$'\e' i j c name row n
	local -a cols=() f=()
	local -A have=()
	while IFS= read -r line; do
		n=0
		while ((n++ < 8)) && [[ $line =~ $esc\[[0-9\;]*[A-Za-z] ]]; do line=${line/"${BASH_REMATCH[0]}"/}; done
		if [[ ${#cols[@]} -eq 0 ]]; then
			line=${line//CPU Affinity/CPU_Affinity}
			line=${line//NUMA Affinity/NUMA_Affinity}
			line=${line//GPU NUMA ID/GPU_NUMA_ID}
			read -r -a f <<<"$line"
			[[ ${f[0]:-} == GPU0 && ${f[1]:-} != X ]] || continue
			cols=("${f[@]}")
			for c in "${cols[@]}"; do
				[[ $c =~ ^GPU([0-9]{1,3})$ ]] || continue
				topo_gpus+=("$((10#${BASH_REMATCH[1]}))")
			done
			if ((${#topo_gpus[@]} > MAX_TOPO_GPUS)); then
				topo_problem="lists ${#topo_gpus[@]} GPUs, more than $MAX_TOPO_GPUS (the most whose sets are weighed)"
				return 1
			fi
			continue
		fi
		[[ $line != Legend:* ]] || break
		read -r -a f <<<"$line"
		[[ ${f[0]:-} =~ ^GPU([0-9]{1,3})$ ]] || continue
		row=$((10#${BASH_REMATCH[1]}))
		contains "$row" "${topo_gpus[@]}" || { topo_problem="has a row GPU$row but no such column"; return 1; }
		[[ -z ${have[$row]:-} ]] || { topo_problem="has two rows GPU$row"; return 1; }
		have[$row]=1
		((${#f[@]} == ${#cols[@]} + 1)) || { topo_problem="has ${#f[@]} cells in the row of GPU$row, not $((${#cols[@]} + 1)) as its header says"; return 1; }
		topo_numa[$row]=-
		for i in "${!cols[@]}"; do
			name=${cols[$i]} c=${f[$((i + 1))]}
			if [[ $name =~ ^GPU([0-9]{1,3})$ ]]; then
				j=$((10#${BASH_REMATCH[1]}))
				if [[ $j == "$row" ]]; then
					[[ $c == X ]] || { topo_problem="says $(shown "$c"), not X, for GPU$row with itself"; return 1; }
				else
					link_rank "$c" || { topo_problem="has the link $(shown "$c") between GPU$row and GPU$j, none of NV#, PIX, PXB, PHB, NODE, SYS"; return 1; }
				fi
				topo_cell[$row $j]=$c
			elif [[ $name == NUMA_Affinity && $c =~ ^[0-9]{1,4}$ ]]; then
				topo_numa[$row]=$((10#$c))
			fi
		done
	done <<<"$1"
	[[ ${#topo_gpus[@]} -gt 0 ]] || { topo_problem="printed no matrix (no header line with GPU0)"; return 1; }
	for i in "${topo_gpus[@]}"; do
		[[ -n ${have[$i]:-} ]] || { topo_problem="has no row for GPU$i"; return 1; }
	done
	local ri rj
	for i in "${topo_gpus[@]}"; do
		for j in "${topo_gpus[@]}"; do
			[[ $i != "$j" ]] || continue
			link_rank "${topo_cell[$i $j]}"
			ri=$lrank
			link_rank "${topo_cell[$j $i]}"
			rj=$lrank
			topo_rank[$i $j]=$((ri > rj ? ri : rj))
		done
	done
	for i in "${all[@]}"; do
		contains "$i" "${topo_gpus[@]}" || { topo_problem="has no GPU$i, which the ${VENDOR} GPU listing has"; return 1; }
	done
	return 0
}

# read_topology: runs TOPOLOGY_COMMAND (bounded: at most MAX_TOPO_BYTES, TOPO_TIMEOUT seconds, its
# stderr read with its stdout) and parses what it printed; fails with topo_problem set.
read_topology() {
	local out rc
	command -v timeout >/dev/null 2>&1 || { topo_problem="was not run: timeout(1) is not installed"; return 1; }
	# (bash's own warning about NUL bytes in the output is not the caller's business)
	{ out=$(
		set -o pipefail
		timeout -k 1 "$TOPO_TIMEOUT" "${TOPOLOGY_COMMAND[@]}" 2>&1 </dev/null | head -c $((MAX_TOPO_BYTES + 1))
	); } 2>/dev/null
	rc=$?
	if (($(LC_ALL=C && printf '%s' "${#out}") > MAX_TOPO_BYTES)); then
		topo_problem="printed more than $MAX_TOPO_BYTES bytes"
		return 1
	fi
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		topo_problem="gave no answer within $TOPO_TIMEOUT s"
		return 1
	fi
	if [[ $rc -ne 0 ]]; then
		local first
		IFS= read -r first <<<"$out"
		topo_problem="failed (exit status $rc): $(shown "$first")"
		return 1
	fi
	parse_topology "$out"
}

# choose_set K GPU...: sets chosen to K of the GPUs (in their order) and chosen_rank to the rank of
# their worst pair: the first set found at the best rank (NVLink first), within one NUMA node before
# across nodes; each set grows from a seed GPU, taking every later GPU (in order) linked to all taken
# ones at that rank or better. Fails when there are fewer than K GPUs. At the worst rank, across nodes,
# the first seed takes the first K GPUs: with no topology to prefer a set, it is the choice made
# without topology.
choose_set() {
	local k=$1 t pass seed h s ok
	shift
	local -a pool=("$@") set=()
	chosen=() chosen_rank=0
	((${#pool[@]} >= k)) || return 1
	for t in 1 2 3 4 5 6; do
		for pass in numa any; do
			for seed in "${pool[@]}"; do
				set=("$seed")
				for h in "${pool[@]}"; do
					((${#set[@]} < k)) || break
					[[ $h != "$seed" ]] || continue
					[[ $pass == any || ${topo_numa[$h]} == "${topo_numa[$seed]}" ]] || continue
					ok=1
					for s in "${set[@]}"; do
						((${topo_rank[$s $h]} <= t)) || {
							ok=0
							break
						}
					done
					((ok == 0)) || set+=("$h")
				done
				((${#set[@]} == k)) || continue
				for h in "${pool[@]}"; do
					contains "$h" "${set[@]}" && chosen+=("$h")
				done
				chosen_rank=$t
				return 0
			done
		done
	done
	return 1
}

# link_of GPU...: sets link to the worst link among the pairs of the GPUs as the matrix prints it (of
# NVLink pairs, the one with the fewest links).
link_of() {
	local a b worst=0 n best_n=999
	link=""
	for a in "$@"; do
		for b in "$@"; do
			[[ $a != "$b" ]] || continue
			local c=${topo_cell[$a $b]} r=${topo_rank[$a $b]}
			link_rank "$c"
			((lrank == r)) || c=${topo_cell[$b $a]}
			if ((r > worst)); then
				worst=$r link=$c best_n=999
			fi
			if ((r == worst && r == 1)); then
				n=$((10#${c#NV}))
				((n >= best_n)) || { best_n=$n link=$c; }
			fi
		done
	done
}

# print_topology: the stdout line that says what was read: the chosen set's link (and /<the node's best
# set's link> when it is worse), then per GPU of the matrix its index, NUMA node and row.
print_topology() {
	local i j row line="topology=$link${topo_best:+/$topo_best}"
	for i in "${topo_gpus[@]}"; do
		row=""
		for j in "${topo_gpus[@]}"; do
			row+="${row:+,}${topo_cell[$i $j]}"
		done
		line+=";$i:${topo_numa[$i]}:$row"
	done
	printf '%s\n' "$line"
}

use_topology=0
if [[ $amount -gt 1 && $topology != any && ${#TOPOLOGY_COMMAND[@]} -gt 0 ]]; then
	if read_topology; then
		use_topology=1
	else
		unkept=""
		[[ $topology != connected && $topology != wait ]] || unkept=", so --topology $topology cannot be kept"
		warn "GPU topology not used: ${TOPOLOGY_COMMAND[*]} $topo_problem; the GPUs are chosen without it$unkept (--topology any skips the read; docs/gpus.md#topology-connected-sets)"
	fi
fi
if [[ ($topology == connected || $topology == wait) && $use_topology -eq 0 && $amount -gt 1 && ${#TOPOLOGY_COMMAND[@]} -eq 0 ]]; then
	warn "--topology $topology: the ${VENDOR} script reads no GPU topology; the GPUs are chosen without it"
fi
# --topology wait on a node without any NVLink-connected set of k: no release would ever make one free.
if [[ $topology == wait && $use_topology -eq 1 ]] && ! { choose_set "$amount" "${all[@]}" && ((chosen_rank == 1)); }; then
	best_text="fewer than $amount GPUs"
	if ((${#chosen[@]} > 0)); then
		link_of "${chosen[@]}"
		best_text="the best set of $amount, [$(join_by_comma "${chosen[@]}")], is linked by $link at worst"
	fi
	die "no set of $amount GPUs of this node is NVLink-connected ($found_text; $best_text), so --topology wait would wait for nothing; --topology prefer takes the best free set"
fi

# check_sick: sets out_of_service[<key>] to why for each GPU of all that a claim file marks sick and that
# still reads unhealthy (or whose health cannot be read); drops the caller's own marks of GPUs that read
# healthy again, or that no vendor health reader confirmed within SICK_MARK_TTL.
declare -A out_of_service=() sick_why=()
check_sick() {
	local i g k marked=() now
	out_of_service=() sick_why=()
	now=$(date +%s)
	for g in "${all[@]}"; do
		k=${key_of[$g]}
		contains "$k" "${sick_key[@]}" && marked+=("$k")
	done
	[[ ${#marked[@]} -gt 0 ]] || return 0
	local health=none
	if declare -F read_health >/dev/null; then
		health=unread
		read_health && health=read
	fi
	for k in "${marked[@]}"; do
		case $health in
		read) [[ -z ${sick_why[${k#uuid:}]:-} ]] || out_of_service[$k]="marked sick, and reads ${sick_why[${k#uuid:}]}" ;;
		unread) out_of_service[$k]="marked sick, and its health cannot be read: $health_problem" ;;
		none)
			for i in "${!sick_key[@]}"; do
				[[ ${sick_key[$i]} == "$k" ]] && ((now - sick_at[i] < SICK_MARK_TTL)) && out_of_service[$k]="marked sick at $(date -d "@${sick_at[$i]}" -u +%FT%TZ 2>/dev/null)"
			done
			;;
		esac
	done
	local kept_key=() kept_at=()
	for i in "${!mine_sick_key[@]}"; do
		k=${mine_sick_key[$i]}
		if contains "$k" "${marked[@]}" && [[ -z ${out_of_service[$k]:-} ]]; then
			continue # it reads healthy again (or its mark expired): the caller's mark goes
		fi
		kept_key+=("$k") kept_at+=("${mine_sick_at[$i]}")
	done
	mine_sick_key=("${kept_key[@]}") mine_sick_at=("${kept_at[@]}")
}

# pick K GPU...: sets mine to the K GPUs handed out: by topology when it was read, else the first K.
# With --topology connected (or wait, whose wait is over) a set that is not NVLink-connected fails; with
# prefer, one worse than the best set of K the node has (claims aside) is said on stderr and in the
# topology line (topo_best).
pick() {
	local k=$1
	shift
	if [[ $use_topology -eq 0 ]]; then
		mine=("${@:1:k}")
		return 0
	fi
	choose_set "$k" "$@"
	mine=("${chosen[@]}")
	link_of "${mine[@]}"
	local got=$link got_rank=$chosen_rank
	if ((got_rank == 1)) || [[ $k -le 1 ]]; then
		return 0
	fi
	choose_set "$k" "${all[@]}"
	link_of "${chosen[@]}"
	local best=$link best_rank=$chosen_rank
	link=$got
	if [[ $topology == connected || $topology == wait ]]; then
		die "no NVLink-connected set of $k GPUs is free (--topology $topology): $found_text, free [$(join_by_comma "$@")]; the best free set [$(join_by_comma "${mine[@]}")] is linked by $got at worst, the node's best set of $k by $best; --topology prefer takes the best free set instead"
	fi
	if ((got_rank > best_rank)); then
		topo_best=$best
		warn "topology: GPUs [$(join_by_comma "${mine[@]}")] are linked by $got at worst (no set of $k linked by $best is free: free [$(join_by_comma "$@")]); --topology connected fails instead of taking them"
	fi
}

if [[ $coordinate == 0 ]]; then
	[[ ${#all[@]} -ge $amount ]] || die "not enough GPUs: $found_text, asked for $amount"
	pick "$amount" "${all[@]}"
	print_result "${mine[@]}"
	[[ $use_topology -eq 0 ]] || print_topology
	exit 0
fi

# The claim key of each GPU: its UUID when the vendor tool gave one, else its index.
declare -A key_of=()
for g in "${all[@]}"; do
	if [[ -n ${uuid_of[$g]:-} ]]; then
		key_of[$g]=uuid:${uuid_of[$g]}
	else
		key_of[$g]=index:$g
	fi
done

# find_free: sets free to the GPUs no live claim holds and no sick mark keeps out (check_sick), and taken
# to "<gpu> by pid <pid>" or "<gpu> out of service: <why>" for the others.
find_free() {
	local g k i owned_by
	free=() taken=()
	check_sick
	for g in "${all[@]}"; do
		owned_by=""
		k=${key_of[$g]}
		for i in "${!claim_key[@]}"; do
			if [[ ${claim_key[$i]} == "$k" || ${claim_key[$i]} == "index:$g" ]]; then
				owned_by="pid ${claim_pid[$i]}"
				break
			fi
		done
		if [[ -n ${out_of_service[$k]:-} ]]; then
			taken+=("$g out of service: ${out_of_service[$k]}")
		elif [[ -n $owned_by ]]; then
			taken+=("$g by $owned_by")
		else
			free+=("$g")
		fi
	done
}

# --topology wait: while no NVLink-connected set of amount is free, the lock is given up, the script
# sleeps WAIT_POLL seconds and looks again, until --lock-timeout seconds have passed since the first
# look (docs/gpus.md#topology-connected-sets); a release by another worker is then seen within WAIT_POLL.
WAIT_POLL=0.5
wait_until=$((SECONDS + lock_timeout))
open_locked
read_claims
find_free
while [[ $topology == wait && $use_topology -eq 1 ]] &&
	! { ((${#free[@]} >= amount)) && choose_set "$amount" "${free[@]}" && ((chosen_rank == 1)); }; do
	left=$((wait_until - SECONDS))
	if ((left <= 0)); then
		got_text="fewer than $amount are free"
		if ((${#free[@]} >= amount)); then
			choose_set "$amount" "${free[@]}"
			link_of "${chosen[@]}"
			got_text="the best free set [$(join_by_comma "${chosen[@]}")] is linked by $link at worst"
		fi
		die "no NVLink-connected set of $amount GPUs became free within $lock_timeout s (--topology wait): $found_text, free [$(join_by_comma "${free[@]}")]; $got_text; raise --lock-timeout (below discovery-script.timeout) to wait longer, or --topology prefer takes the best free set"
	fi
	if [[ -z ${wait_said:-} ]]; then
		wait_said=1
		warn "topology: no NVLink-connected set of $amount GPUs is free (free [$(join_by_comma "${free[@]}")]); waiting up to $lock_timeout s for one (--topology wait)"
	fi
	exec {lock_fd}<&- # not held while sleeping: the workers that release GPUs need it
	sleep "$WAIT_POLL"
	left=$((wait_until - SECONDS))
	open_locked "$((left > 1 ? left : 1))"
	read_claims
	find_free
done
if [[ ${#free[@]} -lt $amount ]]; then
	taken_text=""
	for t in "${taken[@]}"; do
		taken_text+="${taken_text:+, }$t"
	done
	die "not enough GPUs: $found_text, asked for $amount, ${#free[@]} free; taken (coordination directory $coordination_dir): ${taken_text:-none}"
fi
pick "$amount" "${free[@]}"
for g in "${mine[@]}"; do
	mine_key+=("${key_of[$g]}")
	mine_pid+=("$owner")
	mine_st+=("$owner_start")
done
write_own_claims
exec {lock_fd}<&- # releases the lock: the claims are written
print_result "${mine[@]}"
[[ $use_topology -eq 0 ]] || print_topology
