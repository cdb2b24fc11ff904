#!/usr/bin/env bash
# Builds the two images from the repository (docker/README.md, "The engine"), each only when its inputs
# changed:
#
#   images.sh minicluster   yarn-am/minicluster:$HADOOP_VERSION from docker/minicluster/Dockerfile
#   images.sh client        yarn-am/yarn-am:latest from docker/Dockerfile and bin/yarn-am (make build)
#
# The build context is a tar of exactly the files a Dockerfile copies (sent on stdin, so the classic
# builder does not read the whole repository). Its sha256, BASE and the build arguments make the
# inputs hash; the image is also tagged TAG-inputs-HASH (e.g. yarn-am/minicluster:3.4.3-inputs-…; no
# label: a label is one more build step, and a slow one on vfs), and an image with that tag is kept.
#
# Environment: DOCKER_BASE_IMAGE (BASE build argument; default yarn-am/debian-base:bookworm, the image
# engine.sh base makes), HADOOP_VERSION (default 3.4.3), DOCKER_EXTRA_CA_CERTS (files of CA certificates
# the mini cluster image's Maven step trusts, for a TLS-inspecting proxy; default: this machine's
# locally added CAs, /usr/local/share/ca-certificates/*.crt), DOCKER_BUILD_ARGS (more `docker build`
# flags).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BASE="${DOCKER_BASE_IMAGE:-yarn-am/debian-base:bookworm}"
HADOOP_VERSION="${HADOOP_VERSION:-3.4.3}"

log() { echo "images: $*" >&2; }
die() { log "$*"; exit 1; }

# The PEM text of the extra CAs (empty when there are none).
extra_cas() {
  local f files="${DOCKER_EXTRA_CA_CERTS-$(ls /usr/local/share/ca-certificates/*.crt 2>/dev/null || true)}"
  for f in $files; do
    [[ -f "$f" ]] || die "DOCKER_EXTRA_CA_CERTS: $f is not a file (want PEM certificate files)"
    cat "$f"
    echo
  done
}

# build TAG DOCKERFILE ARGS... -- FILE...: builds TAG from a context of FILEs (paths from the repository root).
build() {
  local tag="$1" dockerfile="$2" args=()
  shift 2
  while [[ "$1" != -- ]]; do args+=("$1"); shift; done
  shift
  local f
  for f in "$@"; do [[ -e "$f" ]] || die "$f is missing (for $tag)"; done
  local ctx
  ctx="$(mktemp)"
  trap 'rm -f "$ctx"' RETURN
  # A reproducible tar: same files, same bytes, whatever the checkout time or owner.
  tar -c --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=go-w -f "$ctx" "$dockerfile" "$@"
  local inputs
  inputs="$( { sha256sum <"$ctx"; printf '%s\n' "BASE=$BASE" "${args[@]}"; } | sha256sum | cut -c1-16)"
  local stamp="$tag-inputs-$inputs"
  if docker image inspect "$stamp" >/dev/null 2>&1; then
    docker tag "$stamp" "$tag"
    log "$tag is up to date (inputs $inputs)"
    return
  fi
  log "building $tag (inputs $inputs; BASE=$BASE)"
  local start=$SECONDS
  # shellcheck disable=SC2086
  DOCKER_BUILDKIT=0 docker build --network host -f "$dockerfile" -t "$tag" -t "$stamp" \
    --build-arg "BASE=$BASE" "${args[@]}" ${DOCKER_BUILD_ARGS:-} - <"$ctx"
  log "$tag built in $((SECONDS - start)) s"
  # Older builds of this tag go (other TAG-inputs-* names; images of other tags, e.g. other Hadoop
  # versions, stay), then untagged leftovers.
  local old
  for old in $(docker images --format '{{.Repository}}:{{.Tag}}' "${tag%:*}" | grep -F ":${tag##*:}-inputs-" || true); do
    [[ "$old" == "$stamp" ]] || docker rmi "$old" >/dev/null 2>&1 || true
  done
  docker image prune -f >/dev/null
}

case "${1:-}" in
  minicluster)
    mapfile -t src < <(find testdata/minicluster/src -type f | sort)
    cas="$(extra_cas)"
    build "yarn-am/minicluster:$HADOOP_VERSION" docker/minicluster/Dockerfile \
      --build-arg "HADOOP_VERSION=$HADOOP_VERSION" --build-arg "EXTRA_CA_CERTS=$cas" -- \
      docker/minicluster/entrypoint.sh testdata/minicluster/pom.xml testdata/fake-nvidia-smi/nvidia-smi "${src[@]}"
    ;;
  client)
    [[ -x bin/yarn-am ]] || die "bin/yarn-am is missing: run make build first"
    build yarn-am/yarn-am:latest docker/Dockerfile -- bin/yarn-am
    ;;
  *) die "usage: $0 minicluster | client" ;;
esac
