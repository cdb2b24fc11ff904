#!/usr/bin/env bash
# yarn-am GPU discovery: the part shared by the vendor scripts (nvidia-gpu-discovery.sh,
# amd-gpu-discovery.sh). A vendor script defines three things and then sources this file:
#
#   VENDOR                 a word for messages ("NVIDIA", "AMD")
#   list_gpus              prints the indexes of the machine's GPUs, one per line (exit != 0 on failure)
#   VISIBILITY_VARS        names of the variables that restrict the usable GPUs, first set one wins
#
# Contract (the calling convention of Flink's discovery scripts):
#   <script> <amount> [--enable-coordination-mode | --enable-coordination]
#            [--coordination-dir DIR] [--lock-timeout SECONDS]
#   <script> [<amount>] --release [--coordination-dir DIR] [--lock-timeout SECONDS]
# The first line of stdout is the comma-separated list of indexes; any failure exits non-zero with the
# reason on stderr.
#
# Coordination (only with --enable-coordination[-mode]; see "GPU coordination" in the gpu package doc):
# co-located workers claim GPUs through a directory, default /var/lib/yarn-am/gpu, that an administrator
# creates once per node:
#   install -d -m 3770 -o root -g <group of the container users> /var/lib/yarn-am/gpu
# (setgid: claim files get the directory's group; sticky: only a file's owner may remove or replace it).
# A directory owned by the calling user and writable by no one else (e.g. mode 0700) works too, for
# containers that all run as one user; a --coordination-dir that does not exist is created so (mode 0700). The directory is refused when it is a symbolic link, writable by
# every user, group-writable without the sticky bit, or owned by a user other than root and the caller.
#
# Every user keeps its claims in its own file, claims.<uid> (claims.<uid>@<NM_HOST> when YARN sets NM_HOST;
# only the files of the caller's NM_HOST count) (mode 0640, the directory's group), lines
#   # yarn-am gpu coordination v2: <index> <owner pid> <owner start time>
#   <index> <pid> <starttime>
# The file is only ever replaced by its owner: written to a fresh temporary file (mktemp, O_EXCL) and
# renamed over the old one, so no process opens another user's file for writing or with O_CREAT (which
# fs.protected_regular forbids in sticky directories). All claim files are read, and the caller's own
# rewritten, under one exclusive flock(1) on the directory itself (opened read-only), so the lock needs no
# lock file. <starttime> is field 22 of /proc/<pid>/stat: a claim is alive only while a process with that
# pid AND that start time exists, is not a zombie, and belongs to the owner of the claim file; other claims
# are dead and ignored (a user's dead claims leave its file the next time that user runs the script).
# Symbolic links and non-regular files among the claim files, and claim files owned by another user than
# the one their name says, are refused. The owner of a claim is the caller of the script ($PPID), i.e. the
# process that lives as long as the worker (yarn-am launch).

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
DEFAULT_COORDINATION_DIR=/var/lib/yarn-am/gpu
amount=""
coordinate=0
release=0
coordination_dir=$DEFAULT_COORDINATION_DIR
lock_timeout=30
valid_args="<amount> [--enable-coordination-mode|--enable-coordination] [--coordination-dir DIR] [--lock-timeout SECONDS] [--release]"
if [[ $# -gt 0 && $1 != --* ]]; then
	amount=$1
	shift
fi
while [[ $# -gt 0 ]]; do
	case $1 in
	--enable-coordination-mode | --enable-coordination) coordinate=1 ;;
	--coordination-dir | --lock-timeout)
		[[ $# -ge 2 && -n $2 ]] || die "$1 needs a value; valid: $valid_args"
		if [[ $1 == --coordination-dir ]]; then coordination_dir=$2; else lock_timeout=$2; fi
		shift
		;;
	--coordination-dir=*) coordination_dir=${1#*=} ;;
	--lock-timeout=*) lock_timeout=${1#*=} ;;
	--coordination-file | --coordination-file=*)
		die "--coordination-file is not supported: a single coordination file shared by all users can be wiped or held by any of them; use --coordination-dir DIR (default $DEFAULT_COORDINATION_DIR), where every user has its own claim file"
		;;
	--release) release=1 ;;
	*) die "unknown argument \"$1\"; valid: $valid_args" ;;
	esac
	shift
done

if [[ $release -eq 0 ]]; then
	[[ $amount =~ ^[1-9][0-9]*$ ]] || die "amount \"$amount\" is not a positive integer; usage: $SCRIPT_NAME $valid_args"
fi
# A trailing slash would make the symbolic-link checks below follow a link: drop it.
while [[ $coordination_dir == ?*/ ]]; do coordination_dir=${coordination_dir%/}; done
[[ $coordination_dir == /* ]] || die "--coordination-dir \"$coordination_dir\" is not an absolute path (workers on one node must name the same directory)"
[[ $lock_timeout =~ ^[1-9][0-9]{0,3}$ ]] || die "--lock-timeout \"$lock_timeout\" is not a whole number of seconds between 1 and 9999"

# ---- coordination ---------------------------------------------------------------------------------------
owner=$PPID
me=$EUID
# Claims are kept per NodeManager (NM_HOST, set by YARN in every container): on a real cluster that is
# one set per host; the mini cluster's NodeManagers share one machine but model separate hosts.
host_tag=""
if [[ -n ${NM_HOST:-} ]]; then
	[[ $NM_HOST =~ ^[A-Za-z0-9._-]{1,253}$ ]] || die "NM_HOST \"${NM_HOST:0:60}\" is not a host name (letters, digits, . _ -)"
	host_tag=@$NM_HOST
fi
own_file=$coordination_dir/claims.$me$host_tag
admin_hint="an administrator creates it once per node: install -d -m 3770 -o root -g <group of the users running containers> $coordination_dir"

# check_dir: the coordination directory must be one that only the caller, root and (with the sticky bit)
# the members of its group can write.
check_dir() {
	local d=$coordination_dir st mode owner_uid
	[[ ! -L $d ]] || die "coordination directory $d is a symbolic link; refusing it (a link can be redirected by whoever owns it): use the real directory"
	if [[ ! -e $d && $d != "$DEFAULT_COORDINATION_DIR" ]]; then
		# A directory named explicitly is created private to the caller (containers that all run as one
		# user); mkdir fails on anything already there, a symbolic link included, and the checks below
		# then judge what is there. A shared directory is an administrator's to create.
		mkdir -m 0700 -- "$d" 2>/dev/null
	fi
	[[ -e $d ]] || die "coordination directory $d does not exist; $admin_hint; or pass --coordination-dir with a directory of your own (created mode 0700 if missing) when all containers run as one user"
	[[ -d $d ]] || die "coordination directory $d is not a directory"
	st=$(stat -c '%a %u %g' -- "$d") || die "cannot stat coordination directory $d"
	read -r mode owner_uid dir_gid <<<"$st"
	mode=$((8#$mode))
	if ((mode & 8#0002)); then
		die "coordination directory $d is writable by every user (mode $(printf '%04o' "$mode")): anyone could remove or hold the claims; refusing it; $admin_hint"
	fi
	if ((mode & 8#0020 && !(mode & 8#1000))); then
		die "coordination directory $d is group-writable without the sticky bit (mode $(printf '%04o' "$mode")): a group member could remove other users' claim files; refusing it; fix: chmod 3770 $d"
	fi
	if [[ $owner_uid != 0 && $owner_uid != "$me" ]]; then
		die "coordination directory $d is owned by uid $owner_uid, neither root nor you (uid $me): its owner could remove every claim; refusing it; fix: chown root $d"
	fi
	dir_shared=$((mode & 8#0070))
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
# group; their claims would then look dead and their GPUs free.
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
	die "/proc is mounted with hidepid=$hp${pgid:+,gid=$pgid}: this script cannot see other users' processes and would take their GPU claims for dead; coordination needs /proc without hidepid, or with gid=<the coordination directory's group>"
}

# open_locked: opens the directory read-only and takes the exclusive lock, held until the script exits.
open_locked() {
	check_dir
	{ exec {lock_fd}<"$coordination_dir"; } 2>/dev/null || die "cannot open coordination directory $coordination_dir as uid $me (groups: $(id -Gn 2>/dev/null)): the users running containers must be members of its group; $admin_hint"
	[[ $(stat -L -c '%d:%i' "/dev/fd/$lock_fd") == "$(stat -c '%d:%i' -- "$coordination_dir")" ]] ||
		die "coordination directory $coordination_dir changed while it was being opened; refusing it"
	flock -x -w "$lock_timeout" "$lock_fd" ||
		die "could not lock coordination directory $coordination_dir within $lock_timeout s: held by $(lock_holders); raise --lock-timeout or end the holder"
}

# read_claim_file FILE UID: appends the live claims of FILE to claim_idx/claim_pid/claim_st; the caller's
# own live claims go to mine_idx/mine_st too (minus the released ones in release mode).
read_claim_file() {
	local f=$1 uid=$2 rfd got want idx pid st extra cur puid
	[[ ! -L $f ]] || die "claim file $f is a symbolic link; refusing it (claim files are regular files written by yarn-am); an administrator should remove it"
	[[ -f $f ]] || die "claim file $f is not a regular file; refusing it; an administrator should remove it"
	{ exec {rfd}<"$f"; } 2>/dev/null || die "cannot read claim file $f as uid $me: it must be readable by the directory's group (mode 0640)"
	got=$(stat -L -c '%d:%i:%u:%F' "/dev/fd/$rfd")
	want=$(stat -c '%d:%i:%u:%F' -- "$f")
	[[ $got == "$want" ]] || die "claim file $f changed while it was being opened; refusing it"
	[[ ${want##*:} == "regular file" || ${want##*:} == "regular empty file" ]] || die "claim file $f is not a regular file; refusing it"
	want=${want%:*}
	[[ ${want##*:} == "$uid" ]] || die "claim file $f is owned by uid ${want##*:}, not by uid $uid as its name says; refusing it; an administrator should remove it"
	while read -r idx pid st extra; do
		[[ $idx =~ ^[0-9]+$ && $pid =~ ^[0-9]+$ && $st =~ ^[0-9]+$ && -z ${extra:-} ]] || continue
		if ! cur=$(start_time "$pid"); then
			[[ -d /proc/$pid && ! -r /proc/$pid/stat ]] && die "cannot read /proc/$pid/stat (the owner of a claim in $f): is /proc mounted with hidepid? coordination needs to see every claim owner"
			continue # gone or a zombie: the claim is dead
		fi
		[[ $cur == "$st" ]] || continue # pid reused by another process: the claim is dead
		puid=$(stat -c %u "/proc/$pid" 2>/dev/null) || continue
		[[ $puid == "$uid" ]] || continue # a claim for another user's process: not this user's to make
		if [[ $uid == "$me" ]]; then
			if [[ $release -eq 1 && $pid == "$owner" && $st == "$owner_start" ]]; then
				released+=("$idx")
				continue
			fi
			mine_idx+=("$idx")
			mine_pid+=("$pid")
			mine_st+=("$st")
		fi
		claim_idx+=("$idx")
		claim_pid+=("$pid")
		claim_st+=("$st")
	done <&"$rfd"
	exec {rfd}<&-
}

read_claims() {
	claim_idx=() claim_pid=() claim_st=() mine_idx=() mine_pid=() mine_st=()
	local f name
	for f in "$coordination_dir"/claims.*; do
		[[ -e $f || -L $f ]] || continue # no match
		name=${f##*/claims.}
		if [[ -n $host_tag ]]; then
			[[ $name =~ ^[0-9]+@ && ${name#*@} == "$NM_HOST" ]] || continue
		else
			[[ $name =~ ^[0-9]+$ ]] || continue
		fi
		read_claim_file "$f" "${name%%@*}"
	done
}

# write_own_claims: replaces claims.<uid> with mine_* (removes it when empty) by a fresh temporary file
# and rename(2), never by writing into an existing file.
write_own_claims() {
	local i tmp out="# yarn-am gpu coordination v2: <index> <owner pid> <owner start time>"$'\n'
	if [[ ${#mine_idx[@]} -eq 0 ]]; then
		if [[ -e $own_file || -L $own_file ]]; then
			rm -f -- "$own_file" || die "cannot remove claim file $own_file"
		fi
		return 0
	fi
	for i in "${!mine_idx[@]}"; do
		out+="${mine_idx[$i]} ${mine_pid[$i]} ${mine_st[$i]}"$'\n'
	done
	tmp=$(umask 077 && mktemp -- "$coordination_dir/.claims.$me.XXXXXXXX") || die "cannot create a temporary file in $coordination_dir as uid $me"
	if ! { printf '%s' "$out" >"$tmp" && chmod 0640 -- "$tmp" &&
		{ [[ $dir_shared -eq 0 ]] || chgrp -- "$dir_gid" "$tmp"; } &&
		mv -f -T -- "$tmp" "$own_file"; } 2>/dev/null; then
		rm -f -- "$tmp"
		die "cannot replace claim file $own_file as uid $me (it must be a file of yours in a directory your group can write)"
	fi
}

owner_start=""
if [[ $coordinate -eq 1 || $release -eq 1 ]]; then
	check_proc
	owner_start=$(start_time "$owner") || die "cannot read the start time of the calling process $owner from /proc/$owner/stat"
fi

# ---- release mode ---------------------------------------------------------------------------------------
released=()
if [[ $release -eq 1 ]]; then
	if [[ -e $own_file || -L $own_file ]]; then
		open_locked
		read_claims
		write_own_claims
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
	[[ $g =~ ^[0-9]+$ ]] || die "the ${VENDOR} GPU listing printed \"${g:0:40}\", not a GPU index (a non-negative integer)"
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
	die "not enough GPUs: $found_text, asked for $amount, ${#free[@]} free; taken (coordination directory $coordination_dir): ${taken_text:-none}"
fi
mine=("${free[@]:0:amount}")
for g in "${mine[@]}"; do
	mine_idx+=("$g")
	mine_pid+=("$owner")
	mine_st+=("$owner_start")
done
write_own_claims
join_by_comma "${mine[@]}"
printf '\n'
