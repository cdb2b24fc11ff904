#!/usr/bin/env bash
# make docker-demo (docker/README.md): testdata/jobs/gpu-demo.toml against the mini cluster image.
#
# Starts a Docker engine when none answers (engine.sh), builds the base image when missing and both
# images when their inputs changed (images.sh), runs the mini cluster container (host network, its
# conf/work/kerberos exported to $DOCKER_DEMO_DIR), submits the job attached from the yarn-am image,
# prints the workers' GPU lines from the NodeManagers' container logs, and then stops the container
# and the engine it started, whatever happened. Exit status: that of the submit (1 when the cluster
# did not come up).
#
# Needs bin/yarn-am and bin/worker (the make target builds them). Environment: DOCKER_DEMO_DIR
# (default docker/.demo; wiped at start), DOCKER_MINICLUSTER_ARGS (more harness flags),
# DOCKER_DEMO_TIMEOUT (seconds to wait for the cluster, default 300), DOCKER_DEMO_SECURE (1: the
# Kerberized cluster, --secure; the client logs in from the exported test keytab),
# DOCKER_DEMO_RPC_PROTECTION (with DOCKER_DEMO_SECURE: authentication, integrity or privacy, the
# default), DOCKER_DEMO_JOB (the job file, a path in the repository; default
# testdata/jobs/gpu-demo.toml), and those of engine.sh and images.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
HADOOP_VERSION="${HADOOP_VERSION:-3.4.3}"
export HADOOP_VERSION
EXPORT="${DOCKER_DEMO_DIR:-$ROOT/docker/.demo}"
TIMEOUT="${DOCKER_DEMO_TIMEOUT:-300}"
NAME="yarn-am-minicluster-demo-$$"
cluster_args=()
case "${DOCKER_DEMO_SECURE:-}" in
  1) cluster_args=(--secure --rpc-protection "${DOCKER_DEMO_RPC_PROTECTION:-privacy}") ;;
  "" | 0) [[ -z "${DOCKER_DEMO_RPC_PROTECTION:-}" ]] ||
    { echo "docker-demo: DOCKER_DEMO_RPC_PROTECTION needs DOCKER_DEMO_SECURE=1" >&2; exit 2; } ;;
  *) echo "docker-demo: DOCKER_DEMO_SECURE=$DOCKER_DEMO_SECURE: want 1 (Kerberized) or 0/empty" >&2; exit 2 ;;
esac
JOB="${DOCKER_DEMO_JOB:-testdata/jobs/gpu-demo.toml}"

log() { echo "docker-demo: $*" >&2; }

for b in bin/yarn-am bin/worker; do
  [[ -x "$b" ]] || { log "$b is missing: run make docker-demo (it builds both)"; exit 1; }
done

started_engine=0
container=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n "$container" ]]; then
    log "stopping the mini cluster container"
    docker stop -t 90 "$container" >/dev/null 2>&1 || true
    docker rm -f "$container" >/dev/null 2>&1 || true
  fi
  if ((started_engine)); then
    bash docker/engine.sh stop || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

phase_start=$SECONDS
phase() { log "$1 ($((SECONDS - phase_start)) s)"; phase_start=$SECONDS; }

if ! env_line="$(bash docker/engine.sh env 2>/dev/null)"; then
  started_engine=1
  host="$(bash docker/engine.sh start)"
  env_line="export DOCKER_HOST=$host"
fi
eval "$env_line"
phase "engine at $DOCKER_HOST"
[[ -n "${DOCKER_BASE_IMAGE:-}" ]] || bash docker/engine.sh base
bash docker/images.sh minicluster
bash docker/images.sh client
phase "images ready"

rm -rf "$EXPORT"
mkdir -p "$EXPORT"
# The export dir is mounted at the same path inside, so the paths in conf/ and env hold on the host.
# shellcheck disable=SC2086
container="$(docker run -d --name "$NAME" --network host -v "$EXPORT:$EXPORT" -e "MINICLUSTER_EXPORT=$EXPORT" \
  -e HADOOP_USER_NAME=root "yarn-am/minicluster:$HADOOP_VERSION" "${cluster_args[@]}" ${DOCKER_MINICLUSTER_ARGS:-})"
log "mini cluster container $NAME started; waiting for $EXPORT/env (up to $TIMEOUT s)"
start=$SECONDS
until [[ -f "$EXPORT/env" ]]; do
  if [[ "$(docker inspect -f '{{.State.Running}}' "$container" 2>/dev/null)" != true ]]; then
    log "the mini cluster container exited before it was ready; its last log lines:"
    docker logs --tail 60 "$container" 2>&1 | sed 's/^/  /' >&2
    exit 1
  fi
  if ((SECONDS - start >= TIMEOUT)); then
    log "not ready after $TIMEOUT s; last log lines:"
    docker logs --tail 60 "$container" 2>&1 | sed 's/^/  /' >&2
    exit 1
  fi
  sleep 1
done
docker logs "$container" 2>/dev/null | grep '^MINICLUSTER READY ' || true
phase "mini cluster ready"
# shellcheck disable=SC1091
source "$EXPORT/env"

out="$(mktemp)"
rc=0
# The client runs in the yarn-am image: the repository (job file, bin/worker) and the cluster's
# conf (and keytab, krb5.conf) are mounted read-only at their host paths.
client_env=(-e "HADOOP_CONF_DIR=$HADOOP_CONF_DIR" -e "HADOOP_USER_NAME=$HADOOP_USER_NAME")
login=()
if [[ "${YARN_AM_SECURE:-}" == 1 ]]; then
  client_env+=(-e "KRB5_CONFIG=$KRB5_CONFIG")
  login=(--principal "$YARN_AM_TEST_PRINCIPAL" --keytab "$YARN_AM_TEST_KEYTAB")
  log "Kerberized (hadoop.rpc.protection=$YARN_AM_RPC_PROTECTION): submitting as $YARN_AM_TEST_PRINCIPAL"
fi
docker run --rm --network host -v "$ROOT:$ROOT:ro" -v "$EXPORT:$EXPORT:ro" -w "$ROOT" "${client_env[@]}" \
  yarn-am/yarn-am:latest submit "${login[@]}" "$JOB" 2>&1 | tee "$out" || rc=$?
phase "submit exited $rc"
app="$(grep -o 'application_[0-9]*_[0-9]*' "$out" | head -n1 || true)"
rm -f "$out"
echo
echo "--- GPU lines of the workers of ${app:-?} (container stdout, by NodeManager) ---"
i=0
for d in ${YARN_AM_NM_LOG_DIRS//,/ }; do
  for f in "$d/${app:-none}"/*/stdout; do
    [[ -f "$f" ]] || continue
    grep 'indexes' "$f" | sed "s|^|nm-$i $(basename "$(dirname "$f")"): |" || true
  done
  i=$((i + 1))
done
exit "$rc"
