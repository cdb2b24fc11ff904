# yarn-am — build, test and demo. `make demo` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
BIN := bin/yarn-am
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
# The commit it was built from, stamped explicitly: Go's own VCS stamping is off where GOFLAGS has
# -buildvcs=false, and `yarn-am version` must still name the revision.
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.revision=$(REVISION)
MINICLUSTER_DIR := .minicluster

.PHONY: all build vet unit integration test test-lane test-late-lane prefetch prefetch-suites test-deps demo protos minicluster-up minicluster-down clean readme-commands bench bench-flink

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/yarn-am

vet:
	$(GO) vet ./...
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$bad" ]; then echo "gofmt would change: $$bad"; exit 1; fi
	bash docs/check-links.sh
	@# A clone is source only: no tracked file may be a compiled (ELF) binary.
	@bins=$$(git ls-files -z | while IFS= read -r -d '' f; do \
	  [ -f "$$f" ] && [ "$$(head -c4 "$$f" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] && echo "$$f"; done; true); \
	  if [ -n "$$bins" ]; then echo "compiled binaries are tracked in git (build outputs go under bin/): $$bins"; exit 1; fi

GOTESTSUM := bin/tools/gotestsum
GOTESTSUM_VERSION := v1.13.0
GOTEST_FORMAT ?= pkgname-and-test-fails

# gotestsum runs `go test` and prints a per-package line and a closing summary (DONE N tests ...).
$(GOTESTSUM):
	GOBIN=$(CURDIR)/bin/tools $(GO) install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)

# What the integration tests need besides Go, Java and Maven: Debian's chromium for the web UI test
# (installed once; a no-op when present).
test-deps:
	@bash testdata/ui/install-chromium.sh

# Unit and protocol tests only (no cluster needed), of UNIT_PACKAGES (default every package, and the
# benchmark's, which ./... leaves out as a testdata directory).
UNIT_PACKAGES ?= ./... ./testdata/bench
unit: $(GOTESTSUM)
	$(GOTESTSUM) --format $(GOTEST_FORMAT) -- -race -count=1 $(UNIT_PACKAGES)

# Unit + integration tests against the running mini cluster (make minicluster-up first), of
# INTEGRATION_PACKAGES (default every package; make test passes those with integration tests,
# testdata/minicluster/split-packages.sh cluster, having run the others' unit tests before). The
# integration build tag adds the tests that need the cluster; without a cluster they fail, never skip.
# INTEGRATION_SELECT is go test's -run or -skip of the run (default none: every test); make test splits
# the run in two by it, each half on a cluster of its own.
INTEGRATION_PACKAGES ?= ./...
INTEGRATION_SELECT ?=
integration: build $(GOTESTSUM) test-deps torch-env jax-env flink-dist flink-job
	test -f $(MINICLUSTER_DIR)/env || { echo "no mini cluster: run 'make minicluster-up' first"; exit 1; }
	source $(MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) \
	  YARN_AM_FLINK_HOME=$(FLINK_HOME_CACHE) YARN_AM_FLINK2_HOME=$(FLINK2_HOME_CACHE) \
	  $(GOTESTSUM) --format $(GOTEST_FORMAT) $(if $(INTEGRATION_JSON),--jsonfile $(INTEGRATION_JSON)) -- -race -tags integration -count=1 -timeout 45m $(INTEGRATION_SELECT) $(INTEGRATION_PACKAGES)

# Everything: the fault suite (an RM failover, a lost NodeManager, an RM restart, YARN's default
# expiry: test-faults; its liveness test asserts a replacement within 15 s), then the secure suite
# against the Kerberized mini cluster at each hadoop.rpc.protection level (test-secure-levels), then
# the node-label suite (test-labels), while a side lane runs the secure suite's AM restart with
# short-lived tokens (test-secure-restart: about 4 minutes, mostly waiting on token lifetimes, on a
# Kerberized cluster of its own) then the chaos soak (3 minutes, test-soak: its own HA cluster, a
# clock more than a load; bin/secure-restart.log and bin/soak.log, printed once they are done), and
# the unit tests of the packages without integration tests run at nice 10 (make unit; bin/unit.log),
# with the memory check, the JVM flags against Flink 1.20's and 2.x's own calculators and the key
# fixtures against their jars (test-flink-memory, in testdata/flink/flink.mk; no cluster) in the
# background lane below; then the packages with integration tests (split-packages.sh cluster) run all
# their tests (unit and integration, with -race) in two go test runs at once, each against a mini
# cluster of its own, stopped again whatever the result: framework/flink's tests named TestFlink* (its
# end-to-end tests, and the few unit tests so named) but FLINK_REST_TESTS on the default cluster, and
# everything else (-skip ^TestFlink, framework/flink's other unit tests among them, then
# FLINK_REST_TESTS; bin/integration-rest.log) on $(MINICLUSTER_DIR)/rest, followed in that lane by the rolling-logs suite
# (test-rolling-logs: its own cluster with rolling log aggregation, one Flink job for 2 minutes;
# bin/rolling.log); then the Kerberized Flink tests (test-secure-flink: a [flink]
# keytab job's checkpoints and savepoint on HDFS, a job checkpointing past five token lifetimes and
# one without a keytab told when its tokens end; they need Flink, so they cannot run before the
# prefetch is done), while the preemption suite (test-preemption; bin/preemption.log) runs beside
# it, and a second background lane (test-late-lane,
# nice 10) runs the compatibility suite against the other Hadoop releases, 3.1.4, 3.2.4, 3.3.6 and 3.5.0
# (test-compat; all in testdata/minicluster/minicluster.mk), and the dockerized mini cluster demo,
# plain and Kerberized (test-docker, in docker/docker.mk); its output is printed once it is done
# (bin/late-lane.log). Each stage's lanes take about as long as each other (docs/development.md#ci).
#
# Beside the secure, fault and label suites, which need none of it, a background lane (test-lane, at
# CPU priority nice 10: it takes what the suites leave) fetches and builds what the later ones need:
# the Flink homes first, then the torch and JAX environments (torch about 3 GB, JAX about 140 MB)
# downloading while the memory tests run on the homes (test-flink-memory), then the Flink test job and
# what the later suites download or build once (prefetch-suites: each compatibility release's jars,
# chromium, the Docker images). Its output is printed when make test waits for it, before the
# integration run (bin/prefetch.log); a failed download or memory test fails make test. On a machine
# with warm caches and a built clone the lane has little to do but the memory tests.
# The Flink end-to-end tests (framework/flink) that run in the rest lane (after its -skip ^TestFlink run, on its
# cluster) instead of beside it, so that the two lanes take about as long as each other
# (docs/development.md#ci): the autoscaler's rate-step test (about 19 minutes) stays in the Flink
# lane, and the class-data-sharing and HDFS tests (about 390 s) move out of it. A go test -run pattern.
# After the two integration lanes make test prints each lane's tests that took SLOWEST or more (from
# the lanes' go test JSON, bin/flink-lane.json, bin/rest-lane.json, bin/rest-lane-flink.json), the
# numbers by which the lanes are evened (docs/development.md#ci). A duration.
SLOWEST ?= 30s
FLINK_REST_TESTS ?= ^TestFlink(SickGPU|IdleGPU|DemandScaleIn|Autoscale(Recommend|On)|ClassDataSharing|HDFSCheckpointsAndSavepoint)
test: build vet $(GOTESTSUM)
	@mkdir -p bin; rm -f bin/prefetch.rc; \
	( r=0; nice -n 10 $(MAKE) --no-print-directory test-lane >bin/prefetch.log 2>&1 || r=$$?; echo $$r >bin/prefetch.rc ) & pre=$$!; \
	echo "=== prefetch: Flink, torch, JAX, the memory tests and the suites' downloads in the background (bin/prefetch.log)"; \
	rc=0; $(MAKE) --no-print-directory minicluster-build || rc=1; bash testdata/minicluster/install-kinit.sh || rc=1; \
	rm -f bin/secure-restart.rc bin/unit.rc; \
	( r=0; nice -n 10 $(MAKE) --no-print-directory test-deps unit UNIT_PACKAGES="$$(bash testdata/minicluster/split-packages.sh rest)" >bin/unit.log 2>&1 || r=$$?; \
	  echo $$r >bin/unit.rc ) & unit=$$!; \
	echo "=== the unit tests (-race) of the packages without integration tests, in the background beside the secure, label and fault suites (bin/unit.log)"; \
	rm -f bin/soak.rc; \
	( r=0; $(MAKE) --no-print-directory -o build test-secure-restart SECURE_MINICLUSTER_DIR=$(MINICLUSTER_DIR)/secure-restart >bin/secure-restart.log 2>&1 || r=$$?; \
	  echo $$r >bin/secure-restart.rc; r=0; \
	  $(MAKE) --no-print-directory -o build test-soak SOAK_MINUTES=3 >bin/soak.log 2>&1 || r=$$?; echo $$r >bin/soak.rc ) & restart=$$!; \
	echo "=== the secure suite's AM restart with short-lived tokens, then the chaos soak (3 minutes), beside the fault, secure and label suites (bin/secure-restart.log, bin/soak.log)"; \
	$(MAKE) -o build test-faults || rc=1; \
	$(MAKE) test-secure-levels || rc=1; $(MAKE) -o build test-labels || rc=1; \
	wait $$restart; echo "=== secure suite, AM restart, and the chaos soak: done"; cat bin/secure-restart.log; \
	if [ "$$(cat bin/secure-restart.rc 2>/dev/null)" != 0 ]; then echo "test-secure-restart failed (bin/secure-restart.log)"; rc=1; fi; \
	cat bin/soak.log; \
	if [ "$$(cat bin/soak.rc 2>/dev/null)" != 0 ]; then echo "test-soak failed (bin/soak.log)"; rc=1; fi; \
	wait $$pre; echo "=== prefetch: done"; cat bin/prefetch.log; \
	if [ "$$(cat bin/prefetch.rc 2>/dev/null)" != 0 ]; then echo "prefetch or test-flink-memory failed (bin/prefetch.log)"; rc=1; fi; \
	wait $$unit; echo "=== unit tests: done"; cat bin/unit.log; \
	if [ "$$(cat bin/unit.rc 2>/dev/null)" != 0 ]; then echo "the unit tests failed (bin/unit.log)"; rc=1; fi; \
	rm -f bin/integration-rest.rc bin/rolling.rc; \
	( r=0; { $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(MINICLUSTER_DIR)/rest && \
	    { s=0; $(MAKE) --no-print-directory -o build integration MINICLUSTER_DIR=$(MINICLUSTER_DIR)/rest INTEGRATION_SELECT="-skip ^TestFlink" \
	      INTEGRATION_PACKAGES="$$(bash testdata/minicluster/split-packages.sh cluster)" INTEGRATION_JSON=bin/rest-lane.json || s=1; \
	      $(MAKE) --no-print-directory -o build integration MINICLUSTER_DIR=$(MINICLUSTER_DIR)/rest INTEGRATION_PACKAGES=./framework/flink \
	        INTEGRATION_SELECT="-run '$(FLINK_REST_TESTS)'" INTEGRATION_JSON=bin/rest-lane-flink.json || s=1; [ $$s = 0 ]; }; } >bin/integration-rest.log 2>&1 || r=$$?; \
	  $(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(MINICLUSTER_DIR)/rest >>bin/integration-rest.log 2>&1 || r=1; \
	  echo $$r >bin/integration-rest.rc; r=0; \
	  $(MAKE) --no-print-directory -o build test-rolling-logs >bin/rolling.log 2>&1 || r=$$?; echo $$r >bin/rolling.rc ) & rest=$$!; \
	echo "=== the integration run's tests but framework/flink's TestFlink*, then its $(FLINK_REST_TESTS), on a cluster of their own (bin/integration-rest.log), then the rolling-logs suite (bin/rolling.log), beside framework/flink's other TestFlink*"; \
	if $(MAKE) minicluster-up; then $(MAKE) -o build integration INTEGRATION_PACKAGES=./framework/flink INTEGRATION_SELECT="-run ^TestFlink -skip '$(FLINK_REST_TESTS)'" INTEGRATION_JSON=bin/flink-lane.json || rc=1; else rc=1; fi; \
	$(MAKE) minicluster-down || rc=1; \
	wait $$rest; echo "=== the rest of the integration run, then rolling logs: done"; cat bin/integration-rest.log; \
	if [ "$$(cat bin/integration-rest.rc 2>/dev/null)" != 0 ]; then echo "the rest of the integration run failed (bin/integration-rest.log)"; rc=1; fi; \
	cat bin/rolling.log; \
	if [ "$$(cat bin/rolling.rc 2>/dev/null)" != 0 ]; then echo "test-rolling-logs failed (bin/rolling.log)"; rc=1; fi; \
	for j in flink-lane rest-lane rest-lane-flink; do echo "=== $$j: its tests of $(SLOWEST) or more, slowest first (bin/$$j.json)"; \
	  $(GOTESTSUM) tool slowest --jsonfile bin/$$j.json --threshold $(SLOWEST) || true; done; \
	rm -f bin/late-lane.rc; \
	( r=0; nice -n 10 $(MAKE) --no-print-directory -o build test-late-lane >bin/late-lane.log 2>&1 || r=$$?; echo $$r >bin/late-lane.rc ) & late=$$!; \
	echo "=== compat and docker suites in the background beside the secure Flink and preemption suites (bin/late-lane.log)"; \
	rm -f bin/preemption.rc; \
	( r=0; $(MAKE) --no-print-directory -o build test-preemption >bin/preemption.log 2>&1 || r=$$?; echo $$r >bin/preemption.rc ) & preempt=$$!; \
	echo "=== the preemption suite beside the secure Flink suite (bin/preemption.log)"; \
	$(MAKE) -o build test-secure-flink || rc=1; \
	wait $$preempt; echo "=== preemption: done"; cat bin/preemption.log; \
	if [ "$$(cat bin/preemption.rc 2>/dev/null)" != 0 ]; then echo "test-preemption failed (bin/preemption.log)"; rc=1; fi; \
	wait $$late; echo "=== compat and docker: done"; cat bin/late-lane.log; \
	if [ "$$(cat bin/late-lane.rc 2>/dev/null)" != 0 ]; then echo "test-compat or test-docker failed (bin/late-lane.log)"; rc=1; fi; \
	exit $$rc

# make test's second background lane (above), at nice 10 beside the secure Flink and preemption
# suites, which wait on Flink's checkpoints and YARN's preemption monitor far more than they
# compute: the compatibility suite, then the Docker suite. make test passes -o build: bin/yarn-am
# is the one make test built, never relinked beside the suites that run it. Exit status 1 when either
# failed.
test-late-lane:
	@rc=0; $(MAKE) --no-print-directory -o build test-compat || rc=1; \
	$(MAKE) --no-print-directory -o build test-docker || rc=1; exit $$rc

# make test's background lane (above): flink-dist, then torch-env and jax-env beside test-flink-memory,
# then flink-job and prefetch-suites. Exit status 1 when any of them failed.
test-lane:
	@$(MAKE) --no-print-directory flink-dist || exit 1; \
	( r=0; $(MAKE) --no-print-directory torch-env jax-env >bin/prefetch-python.log 2>&1 || r=$$?; echo $$r >bin/prefetch-python.rc ) & py=$$!; \
	rc=0; $(MAKE) --no-print-directory test-flink-memory || rc=1; \
	$(MAKE) --no-print-directory flink-job prefetch-suites || rc=1; \
	wait $$py; cat bin/prefetch-python.log; [ "$$(cat bin/prefetch-python.rc 2>/dev/null)" = 0 ] || rc=1; exit $$rc

# The downloads the integration run needs besides Maven's (make test starts them early): the Flink
# distribution, the torch and JAX environments, each a no-op when its cache is complete.
prefetch: flink-dist torch-env jax-env

# What the later suites of make test download or build once (make test's background lane fetches them
# ahead): each COMPAT_VERSIONS release's jars and harness classes (minicluster-build), Debian's chromium
# for the web UI test (test-deps) and the Docker suite's images (docker/prefetch.sh, make
# docker-prefetch without its build: bin/yarn-am is make test's, not rebuilt beside the running suites);
# each a no-op when done.
prefetch-suites:
	@for v in $(COMPAT_VERSIONS); do $(MAKE) --no-print-directory minicluster-build HADOOP_VERSION=$$v || exit 1; done
	@$(MAKE) --no-print-directory test-deps
	@# docker build's own output (hundreds of lines) stays in bin/docker-prefetch.log unless it failed.
	@HADOOP_VERSION=$(DOCKER_HADOOP_VERSION) bash docker/prefetch.sh >bin/docker-prefetch.log 2>&1 && \
	  grep -E '^(engine|images): ' bin/docker-prefetch.log || \
	  { tail -n 40 bin/docker-prefetch.log; echo "docker/prefetch.sh failed (bin/docker-prefetch.log)"; exit 1; }

# The demo on a fresh clone: builds yarn-am and the example worker (static, for the containers), starts
# the mini cluster, submits testdata/jobs/gpu-demo.toml attached (2 TaskExecutors x 2 GPUs, coordination
# mode; its events and result are shown), prints the workers' GPU lines from the NodeManagers' container
# logs, and stops the cluster whatever happened. Exit status: that of the submit.
demo: build
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/worker ./testdata/worker
	@rc=0; out=$$(mktemp); \
	if $(MAKE) minicluster-up; then \
	  source $(MINICLUSTER_DIR)/env; \
	  $(BIN) check testdata/jobs/gpu-demo.toml || true; \
	  $(BIN) submit testdata/jobs/gpu-demo.toml 2>&1 | tee $$out || rc=$$?; \
	  app=$$(grep -o 'application_[0-9]*_[0-9]*' $$out | head -n1 || true); \
	  echo; echo "--- GPU lines of the workers of $${app:-?} (container stdout) ---"; \
	  for d in $${YARN_AM_NM_LOG_DIRS//,/ }; do \
	    for f in $$d/$${app:-none}/*/stdout; do \
	      [[ -f $$f ]] && sed "s|^|$$(basename $$(dirname $$f)): |" $$f | grep 'indexes' || true; \
	    done; \
	  done; \
	else rc=1; fi; \
	rm -f $$out; $(MAKE) minicluster-down || true; exit $$rc

# yarn-am against Hadoop's DistributedShell on the mini cluster (started once, stopped after; a cluster
# that already runs is used and left running): A B A B runs of 8, 16 and 32 containers with and without a
# GPU each; then the Flink row: yarn-am's [flink] mode against Flink's own yarn-application mode, 4
# TaskManagers x 1 GPU. Prints the tables of medians and ratios and the paths of
# testdata/bench/out/results.csv, flink.csv and chart.png (testdata/bench/README.md). BENCH picks the
# rows: all (default), dshell, flink (the Flink row alone; also `make bench-flink`), flink-demand
# (TaskManagers on demand against Flink's YARN mode, testdata/bench/README.md) or autoscale (the
# autoscaler's rate step at the documented defaults and its replay: out/autoscale.md). BENCH_ARGS
# passes flags, e.g. BENCH_ARGS='-pairs 5'.
BENCH ?= all
bench: build $(if $(filter dshell,$(BENCH)),,flink-dist flink-job)
	GO=$(GO) MINICLUSTER_DIR=$(MINICLUSTER_DIR) testdata/bench/run.sh -mode $(BENCH) \
	  -flink-home $(FLINK_HOME_CACHE) -flink-job $(FLINK_JOB_JAR) $(BENCH_ARGS)

bench-flink:
	$(MAKE) bench BENCH=flink

# Regenerates yarnrpc/hadooppb/*.pb.go; installs protoc (Maven Central) and protoc-gen-go into bin/tools.
protos:
	GO=$(GO) yarnrpc/hadooppb/gen.sh

include testdata/minicluster/minicluster.mk
include docker/docker.mk
include testdata/flink/flink.mk
include testdata/torch/torch.mk
include testdata/jax/jax.mk

clean:
	rm -rf bin

# Writes docs/commands.md (the command reference) from the binary's own help texts; a test keeps the
# two identical (cmd/yarn-am/readme_test.go).
readme-commands: build
	@{ printf '# Command reference\n\nEvery command'"'"'s `yarn-am help <command>` text, generated by `make readme-commands`; a test keeps the two\nidentical. Back to the [README](../README.md).\n\n'; \
	  for c in $$($(BIN) help | awk '/^Commands:/{f=1;next} f&&NF==0{exit} f{print $$1}'); do \
	  printf '### `yarn-am %s`\n\n```text\n' "$$c"; $(BIN) help "$$c"; printf '```\n\n'; done; } | sed '$$d' > docs/commands.md
