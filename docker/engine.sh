#!/usr/bin/env bash
# A Docker engine for the docker targets (docker/README.md, "The engine").
#
#   engine.sh start   use the engine that answers ($DOCKER_HOST, else the default socket); when none
#                     does, start our own dockerd on docker/.engine/docker.sock (installing Debian's
#                     docker.io with apt-get when dockerd is missing). Prints the DOCKER_HOST to use.
#   engine.sh stop    stop the dockerd this script started (pid file in the state dir); nothing else
#   engine.sh env     print `export DOCKER_HOST=...` for the engine start would use (fails when none
#                     answers)
#   engine.sh base    make sure the base image $DOCKER_BASE_IMAGE exists; when it is the local default
#                     (yarn-am/debian-base:bookworm) and missing, build it with debootstrap
#
# Environment: DOCKER_ENGINE_DIR (state dir, default docker/.engine: socket, pid, log, data-root and
# exec-root; images stay there between runs), DOCKER_STORAGE_DRIVER (default overlay2 when an overlay
# mount works in the state dir, else vfs), DOCKER_BASE_IMAGE (default yarn-am/debian-base:bookworm),
# DEBIAN_MIRROR (default: the first deb.debian.org-style URI of this machine's apt sources).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${DOCKER_ENGINE_DIR:-$HERE/.engine}"
BASE_IMAGE="${DOCKER_BASE_IMAGE:-yarn-am/debian-base:bookworm}"
OWN_HOST="unix://$STATE/docker.sock"

log() { echo "engine: $*" >&2; }
die() { log "$*"; exit 1; }

answers() { DOCKER_HOST="$1" timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# The engine to use: $DOCKER_HOST when set (it must answer: a user who names one wants that one),
# else our own if it runs, else the default socket if it answers. Empty when none answers.
current_host() {
  if [[ -n "${DOCKER_HOST:-}" && "${DOCKER_HOST}" != "$OWN_HOST" ]]; then
    answers "$DOCKER_HOST" || die "DOCKER_HOST=$DOCKER_HOST does not answer (docker version failed); unset it to let engine.sh start an engine"
    echo "$DOCKER_HOST"
    return
  fi
  if answers "$OWN_HOST"; then echo "$OWN_HOST"; return; fi
  if [[ -S /var/run/docker.sock ]] && answers unix:///var/run/docker.sock; then
    echo unix:///var/run/docker.sock
    return
  fi
  echo ""
}

need_root() { [[ "$(id -u)" == 0 ]] || die "starting dockerd needs root (or start a Docker engine yourself and set DOCKER_HOST)"; }

install_pkgs() {
  local missing=() p
  for p in "$@"; do
    case "$p" in
      docker.io) command -v dockerd >/dev/null || missing+=(docker.io) ;;
      debootstrap) command -v debootstrap >/dev/null || missing+=(debootstrap) ;;
    esac
  done
  ((${#missing[@]})) || return 0
  need_root
  log "installing ${missing[*]} with apt-get"
  bash "$HERE/../testdata/apt-install.sh" "${missing[@]}"
}

# overlay2 when the kernel mounts an overlay on the state dir's file system (not inside a container
# whose root is an overlay already), else vfs, which works everywhere but copies the whole file system
# at every build step and container start.
storage_driver() {
  if [[ -n "${DOCKER_STORAGE_DRIVER:-}" ]]; then
    echo "$DOCKER_STORAGE_DRIVER"
    return
  fi
  local d="$STATE/overlay-probe" ok=0
  rm -rf "$d"
  mkdir -p "$d/lower" "$d/upper" "$d/work" "$d/merged"
  if mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null; then
    umount "$d/merged" && ok=1
  fi
  rm -rf "$d"
  if ((ok)); then echo overlay2; else echo vfs; fi
}

own_pid() {
  local pid
  [[ -f "$STATE/pid" ]] || return 1
  pid="$(cat "$STATE/pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "dockerd.*$STATE/docker.sock" || return 1
  echo "$pid"
}

cmd_start() {
  local host
  host="$(current_host)"
  if [[ -n "$host" ]]; then
    log "using the engine at $host"
    echo "$host"
    return
  fi
  need_root
  install_pkgs docker.io
  command -v docker >/dev/null || die "no docker client on PATH (Debian's docker.io provides one)"
  mkdir -p "$STATE/data" "$STATE/exec"
  if own_pid >/dev/null; then
    die "dockerd (pid $(own_pid)) runs on $OWN_HOST but does not answer; see $STATE/dockerd.log or run: $0 stop"
  fi
  rm -f "$STATE/docker.sock" "$STATE/pid"
  local driver
  driver="$(storage_driver)"
  log "starting dockerd ($driver) on $OWN_HOST (log: $STATE/dockerd.log)"
  # No iptables, no bridge: our containers use the host network (everything listens on 127.0.0.0/8).
  setsid dockerd --storage-driver="$driver" --iptables=false --ip-masq=false --bridge=none \
    --host "$OWN_HOST" --data-root "$STATE/data" --exec-root "$STATE/exec" \
    --pidfile "$STATE/pid" >"$STATE/dockerd.log" 2>&1 </dev/null &
  local pid=$! start=$SECONDS
  until answers "$OWN_HOST"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$STATE/dockerd.log" >&2
      die "dockerd exited before it answered (log: $STATE/dockerd.log)"
    fi
    if ((SECONDS - start > 60)); then
      tail -n 30 "$STATE/dockerd.log" >&2
      kill -TERM "$pid" 2>/dev/null || true
      die "dockerd did not answer within 60 s (log: $STATE/dockerd.log)"
    fi
    sleep 0.5
  done
  log "dockerd (pid $pid) ready in $((SECONDS - start)) s"
  echo "$OWN_HOST"
}

cmd_stop() {
  local pid
  if ! pid="$(own_pid)"; then
    log "no dockerd of ours runs (state dir $STATE)"
    rm -f "$STATE/pid"
    return 0
  fi
  # Containers of ours that still run are stopped with the engine (dockerd stops them on SIGTERM).
  log "stopping dockerd (pid $pid)"
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && ((waited < 60)); do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after 60 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # dockerd starts its own containerd; it normally goes with dockerd, a SIGKILLed dockerd leaves it.
  local c
  for c in $(pgrep -f "containerd.*$STATE/exec" || true); do
    log "stopping leftover containerd (pid $c)"
    kill -TERM "$c" 2>/dev/null || true
  done
  # What dockerd leaves mounted under the state dir (its netns file, the data-root's private bind
  # mount) would keep the dir from being removed: unmount it, deepest first.
  local m
  for m in $(awk -v s="$STATE/" 'index($2, s) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -f "$STATE/pid"
  log "stopped"
}

cmd_env() {
  local host
  host="$(current_host)"
  [[ -n "$host" ]] || die "no Docker engine answers: run $0 start"
  echo "export DOCKER_HOST=$host"
}

debian_mirror() {
  if [[ -n "${DEBIAN_MIRROR:-}" ]]; then echo "$DEBIAN_MIRROR"; return; fi
  local uri
  # deb822 sources (URIs: ...) first, then one-line sources (deb URI suite ...).
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}')"
  [[ -n "$uri" ]] || uri="$(cat /etc/apt/sources.list 2>/dev/null | awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}')"
  echo "${uri:-http://deb.debian.org/debian}"
}

cmd_base() {
  export DOCKER_HOST="${DOCKER_HOST:-$(current_host)}"
  [[ -n "$DOCKER_HOST" ]] || die "no Docker engine answers: run $0 start"
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    log "base image $BASE_IMAGE present"
    return
  fi
  [[ "$BASE_IMAGE" == yarn-am/debian-base:bookworm ]] ||
    die "base image $BASE_IMAGE is missing: pull it (docker pull $BASE_IMAGE) or unset DOCKER_BASE_IMAGE to build yarn-am/debian-base:bookworm locally"
  local tarball="$STATE/debian-bookworm-minbase.tar" start=$SECONDS
  # The root file system is kept as a tar beside the data-root: another storage driver (another
  # image store) or a pruned image costs an import, not another debootstrap.
  if [[ ! -s "$tarball" ]]; then
    need_root
    install_pkgs debootstrap
    local dir mirror
    mirror="$(debian_mirror)"
    mkdir -p "$STATE"
    dir="$(mktemp -d "$STATE/rootfs.XXXXXX")"
    log "debootstrap --variant=minbase bookworm from $mirror (log: $STATE/debootstrap.log)"
    if ! debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$STATE/debootstrap.log" 2>&1; then
      tail -n 20 "$STATE/debootstrap.log" >&2
      rm -rf "$dir"
      die "debootstrap failed (log: $STATE/debootstrap.log)"
    fi
    # Leave out what a container does not need: apt lists and caches, logs.
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/var/log/*
    tar -C "$dir" -c -f "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$dir"
  fi
  docker import - "$BASE_IMAGE" <"$tarball" >/dev/null
  log "base image $BASE_IMAGE made in $((SECONDS - start)) s"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  env) cmd_env ;;
  base) cmd_base ;;
  *) die "usage: $0 start | stop | env | base" ;;
esac
