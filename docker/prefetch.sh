#!/usr/bin/env bash
# make docker-prefetch (docker/README.md, "The engine"): the images make test-docker runs, built ahead
# (make test builds them in its background lane, docker/.engine keeping them for the suite): a Docker
# engine started when none answers (engine.sh start) and stopped again, the base image made when
# missing (engine.sh base), the mini cluster and client images built when their inputs changed
# (images.sh). Needs bin/yarn-am (the make target builds it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
started_engine=0
# The demo test fails on an engine it finds running that was not before (TestDockerDemo): ours stops.
trap '((started_engine)) && bash docker/engine.sh stop' EXIT
if ! env_line="$(bash docker/engine.sh env 2>/dev/null)"; then
  started_engine=1
  env_line="export DOCKER_HOST=$(bash docker/engine.sh start)"
fi
eval "$env_line"
[[ -n "${DOCKER_BASE_IMAGE:-}" ]] || bash docker/engine.sh base
bash docker/images.sh minicluster
bash docker/images.sh client
