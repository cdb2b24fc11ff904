# Docker: the mini cluster image, the yarn-am client image, the demo and its test (docker/README.md).
# The work is done by the scripts in docker/; these targets pass the make variables on.
# DOCKER_HADOOP_VERSION: the Hadoop the mini cluster image is built against (its tag); by default the
# mini cluster's HADOOP_VERSION (testdata/minicluster/minicluster.mk), else 3.4.3.
DOCKER_HADOOP_VERSION ?= $(or $(HADOOP_VERSION),3.4.3)

.PHONY: docker-engine-up docker-engine-down docker-worker docker-images docker-prefetch docker-demo test-docker

# Start a Docker engine when none answers (dockerd on docker/.engine/docker.sock, installing Debian's
# docker.io when missing); stop only the one started so.
docker-engine-up:
	@bash docker/engine.sh start >/dev/null
	@bash docker/engine.sh env
docker-engine-down:
	@bash docker/engine.sh stop

# The example worker the demo job ships (static: it runs inside the mini cluster's containers).
docker-worker:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/worker ./testdata/worker

# Both images on the running engine (make docker-engine-up first), each only when its inputs changed;
# the base image yarn-am/debian-base:bookworm is built with debootstrap when missing.
docker-images: build
	@eval "$$(bash docker/engine.sh env)" && bash docker/engine.sh base && \
	  HADOOP_VERSION=$(DOCKER_HADOOP_VERSION) bash docker/images.sh minicluster && bash docker/images.sh client

# testdata/jobs/gpu-demo.toml against the mini cluster container, submitted from the yarn-am image;
# shows the events and the workers' GPU lines and stops the container (and an engine it started)
# whatever happened. Exit status: that of the submit.
# docker-images with the engine started and stopped again when none answers (make test's background lane).
docker-prefetch: build
	@HADOOP_VERSION=$(DOCKER_HADOOP_VERSION) bash docker/prefetch.sh

docker-demo: build docker-worker
	@HADOOP_VERSION=$(DOCKER_HADOOP_VERSION) bash docker/demo.sh

# The demo as a go test (docker/demo_test.go, build tag docker), which make test runs: asserts the
# job SUCCEEDED, every worker's GPU indexes (distinct per node) and that nothing was left running.
test-docker: build docker-worker $(GOTESTSUM)
	HADOOP_VERSION=$(DOCKER_HADOOP_VERSION) \
	  $(GOTESTSUM) --format $(GOTEST_FORMAT) -- -tags docker -count=1 -timeout 30m -run TestDocker ./docker/
