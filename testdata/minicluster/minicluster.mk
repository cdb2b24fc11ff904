# Mini YARN + HDFS cluster for integration tests and benchmarks (testdata/minicluster/README.md).
# The work is done by testdata/minicluster/minicluster.sh; these targets only pass the state dir.
MINICLUSTER_SH := testdata/minicluster/minicluster.sh
# The packages holding the tests a suite picks by name (testdata/minicluster/test-packages.sh): the
# suites run go test on those, not on ./... (41 test binaries linked per run), and fail on a listed
# test that no package has.
TEST_PACKAGES := testdata/minicluster/test-packages.sh
# Kerberos mode: make minicluster-up SECURE=1 [RPC_PROTECTION=authentication|integrity|privacy].
SECURE ?=
RPC_PROTECTION ?=
# Hadoop release of the mini cluster: 3.1.x, 3.2.x, 3.3.x, 3.4.x or 3.5.x (make minicluster-up HADOOP_VERSION=3.5.0).
# Each version keeps its jars list and classes in testdata/minicluster/target/VERSION/.
HADOOP_VERSION ?= 3.4.3
# Fault modes of the plain cluster (README.md, "Fault controls"): HA=1 two RMs rm1/rm2 with manual
# failover (minicluster.sh failover DIR); RECOVERY=1 one restartable RM (minicluster.sh rm-restart DIR);
# NM_EXPIRY_MS the NM liveness expiry for minicluster.sh nm-stop DIR N (default 10000 with HA or
# RECOVERY, else Hadoop's). LOG_FORMAT: aggregated log file format, TFile (default) or IFile.
# LOG_ROLL_SEC=N: rolling log aggregation every N seconds (default off, YARN's -1).
HA ?=
RECOVERY ?=
# LABELS=1: node labels gpu and fpga, NodeManager 1 in the exclusive gpu partition (README.md, "Node labels").
LABELS ?=
# PREEMPTION=1: queues batch and urgent (50% each) and the CapacityScheduler's preemption monitor,
# max_wait_before_kill 10 s (README.md, "Preemption").
PREEMPTION ?=
# PLACEMENT=1 (or placement-processor, scheduler): the RM's yarn.resourcemanager.placement-constraints.handler
# and three NodeManagers (README.md, "Placement constraints"); test-labels starts its cluster with it.
PLACEMENT ?=
NM_EXPIRY_MS ?=
LOG_FORMAT ?=
LOG_ROLL_SEC ?=
MINICLUSTER_FAULT_ENV = MINICLUSTER_HA=$(HA) MINICLUSTER_RECOVERY=$(RECOVERY) MINICLUSTER_LABELS=$(LABELS) MINICLUSTER_PREEMPTION=$(PREEMPTION) MINICLUSTER_PLACEMENT=$(PLACEMENT) \
  MINICLUSTER_NM_EXPIRY_MS=$(NM_EXPIRY_MS) MINICLUSTER_LOG_FORMAT=$(LOG_FORMAT) MINICLUSTER_LOG_ROLL_SEC=$(LOG_ROLL_SEC)
# Delegation token lifetimes of the Kerberized cluster in seconds (README.md, "Token lifetimes"): the
# RM's and the NameNode's renew interval and max lifetime, e.g. TOKEN_RENEW_SEC=30
# TOKEN_MAX_LIFETIME_SEC=60 (default 60 and 180). They need SECURE=1 (or minicluster-up-secure).
TOKEN_RENEW_SEC ?=
TOKEN_MAX_LIFETIME_SEC ?=
MINICLUSTER_TOKEN_ARGS = $(if $(TOKEN_RENEW_SEC),--token-renew-sec $(TOKEN_RENEW_SEC)) \
  $(if $(TOKEN_MAX_LIFETIME_SEC),--token-max-lifetime-sec $(TOKEN_MAX_LIFETIME_SEC))
# Where minicluster-up-secure keeps its cluster: beside the plain one (it may run at the same time).
SECURE_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/secure

.PHONY: minicluster-build minicluster-up minicluster-down minicluster-check minicluster-up-secure \
  minicluster-down-secure minicluster-check-secure

# Resolve the Hadoop jars (Maven, only when pom.xml changed) and compile the harness.
minicluster-build:
	@MINICLUSTER_HADOOP_VERSION=$(HADOOP_VERSION) bash $(MINICLUSTER_SH) build

# Start MiniDFSCluster + MiniYARNCluster in the background and wait until ready; writes
# $(MINICLUSTER_DIR)/env. Exits 0 at once if one is already running and ready.
minicluster-up:
	@MINICLUSTER_SECURE=$(SECURE) MINICLUSTER_RPC_PROTECTION=$(RPC_PROTECTION) $(MINICLUSTER_FAULT_ENV) \
	  MINICLUSTER_ARGS="$${MINICLUSTER_ARGS:-} $(strip $(MINICLUSTER_TOKEN_ARGS))" \
	  MINICLUSTER_HADOOP_VERSION=$(HADOOP_VERSION) bash $(MINICLUSTER_SH) up $(MINICLUSTER_DIR)

# Stop it (SIGTERM, then SIGKILL after 60 s, children included). Exits 0 when none runs.
minicluster-down:
	@bash $(MINICLUSTER_SH) down $(MINICLUSTER_DIR)

# Java-side proof of the running cluster: SecureCheck (Kerberized only), then DistributedShell.
minicluster-check:
	@bash $(MINICLUSTER_SH) check $(MINICLUSTER_DIR)

# The Kerberized cluster in $(SECURE_MINICLUSTER_DIR) (default .minicluster/secure), beside the plain
# one: source $(SECURE_MINICLUSTER_DIR)/env for the secure suite. RPC_PROTECTION as above.
minicluster-up-secure:
	@MINICLUSTER_SECURE=1 MINICLUSTER_RPC_PROTECTION=$(RPC_PROTECTION) MINICLUSTER_LOG_FORMAT=$(LOG_FORMAT) \
	  MINICLUSTER_ARGS="$${MINICLUSTER_ARGS:-} $(strip $(MINICLUSTER_TOKEN_ARGS))" \
	  MINICLUSTER_HADOOP_VERSION=$(HADOOP_VERSION) bash $(MINICLUSTER_SH) up $(SECURE_MINICLUSTER_DIR)

minicluster-down-secure:
	@bash $(MINICLUSTER_SH) down $(SECURE_MINICLUSTER_DIR)

minicluster-check-secure:
	@bash $(MINICLUSTER_SH) check $(SECURE_MINICLUSTER_DIR)

# The secure suite, which make test runs too: for each level of SECURE_LEVELS, bring the Kerberized
# cluster up in $(SECURE_MINICLUSTER_DIR), run `go test -tags integration -run Secure` (on the packages
# test-packages.sh finds) with its
# env, and bring it down (whatever happened): the submit, kinit-advice and log-scan tests. kinit (Debian's krb5-user) is installed once by install-kinit.sh. The plain cluster runs
# beside it (started here unless already up, and then stopped again): its RM address goes to the
# tests as YARN_AM_PLAIN_RM_ADDRESS, the server TestSecureClientRefusesSimpleFallback must refuse.
SECURE_LEVELS ?= authentication integrity privacy
# After the levels: the Kerberized cluster once more with short token lifetimes (SECURE_RESTART_TOKENS)
# for SECURE_RESTART_RUN, side by side: a keytab job that outlives its tokens, and an AM SIGKILLed
# under a keytab job whose kept TaskExecutors must go on refreshing their tokens from the next attempt
# (docs/running.md#kept-taskexecutors-find-the-new-attempt; about 4 minutes with the cluster's start).
SECURE_RESTART_TOKENS ?= TOKEN_RENEW_SEC=30 TOKEN_MAX_LIFETIME_SEC=60
SECURE_RESTART_RUN ?= TestKeptTaskExecutorsRefreshTokensAfterAMRestart|TestLongJobOutlivesTokens
.PHONY: test-secure test-secure-levels test-secure-restart
test-secure: $(GOTESTSUM)
	@rc=0; $(MAKE) --no-print-directory test-secure-levels || rc=1; \
	$(MAKE) --no-print-directory test-secure-restart || rc=1; exit $$rc

# The first half of test-secure: SECURE_LEVELS, with the plain cluster beside them.
test-secure-levels: $(GOTESTSUM)
	@bash testdata/minicluster/install-kinit.sh
	@rc=0; plain_was_up=0; [ -f $(MINICLUSTER_DIR)/env ] && plain_was_up=1; \
	$(MAKE) --no-print-directory minicluster-up || rc=1; \
	YARN_AM_PLAIN_RM_ADDRESS=$$( . $(MINICLUSTER_DIR)/env 2>/dev/null && echo "$$YARN_AM_RM_ADDRESS"); \
	export YARN_AM_PLAIN_RM_ADDRESS; \
	pkgs=$$(bash $(TEST_PACKAGES) Secure) || rc=1; \
	for lvl in $(SECURE_LEVELS); do \
	  start=$$(date +%s); echo "=== secure suite, hadoop.rpc.protection=$$lvl"; \
	  if $(MAKE) --no-print-directory minicluster-up-secure RPC_PROTECTION=$$lvl; then \
	    ( . $(SECURE_MINICLUSTER_DIR)/env && \
	      $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration secure' -count=1 -timeout 20m -run Secure $$pkgs ) || rc=1; \
	  else rc=1; fi; \
	  $(MAKE) --no-print-directory minicluster-down-secure || rc=1; \
	  echo "=== $$lvl: $$(( $$(date +%s) - start )) s"; \
	done; \
	[ $$plain_was_up = 1 ] || $(MAKE) --no-print-directory minicluster-down || rc=1; \
	exit $$rc

# The second half of test-secure: SECURE_RESTART_RUN on a Kerberized cluster with
# SECURE_RESTART_TOKENS. make test runs it in a lane of its own beside test-secure-levels and
# test-labels (its tests mostly wait on token lifetimes), with SECURE_MINICLUSTER_DIR set to
# $(MINICLUSTER_DIR)/secure-restart so the two Kerberized clusters have a directory each.
test-secure-restart: $(GOTESTSUM)
	@bash testdata/minicluster/install-kinit.sh
	@rc=0; if [ -n "$(strip $(SECURE_RESTART_RUN))" ]; then \
	  start=$$(date +%s); echo "=== secure suite, AM restart with $(SECURE_RESTART_TOKENS)"; \
	  if $(MAKE) --no-print-directory minicluster-up-secure $(SECURE_RESTART_TOKENS); then \
	    ( . $(SECURE_MINICLUSTER_DIR)/env && \
	      $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration secure' -count=1 -timeout 15m -run '^($(SECURE_RESTART_RUN))$$' ./cmd/yarn-am/ ) || rc=1; \
	  else rc=1; fi; \
	  $(MAKE) --no-print-directory minicluster-down-secure || rc=1; \
	  echo "=== AM restart: $$(( $$(date +%s) - start )) s"; \
	fi; exit $$rc

# The Kerberized Flink tests, which make test runs after the integration run: the secure suite runs
# before the background prefetch has Flink in place, so they have a target of their own. A
# Kerberized cluster in $(SECURE_MINICLUSTER_DIR) at the default protection with short token
# lifetimes (SECURE_FLINK_TOKENS: renewed every 30 s, dead after 60 s), only SECURE_FLINK_RUN, at
# once: a [flink] keytab job's checkpoints and savepoint on HDFS, and a counter job checkpointing
# every 5 s for five token lifetimes while the JobManager hands the AM's new tokens to its JVMs, and a
# job without a keytab told when its tokens end (docs/flink.md#tokens-past-their-lifetime); the
# cluster down whatever happened. About 7 minutes
# with the cluster's start.
SECURE_FLINK_RUN ?= TestFlinkHDFSKerberized|TestFlinkTokensOutliveTheirLifetime|TestFlinkWithoutAKeytabIsToldWhenItsTokensEnd
SECURE_FLINK_TOKENS ?= TOKEN_RENEW_SEC=30 TOKEN_MAX_LIFETIME_SEC=60
.PHONY: test-secure-flink test-rolling-logs
test-secure-flink: build $(GOTESTSUM) flink-dist flink-job
	@bash testdata/minicluster/install-kinit.sh
	@rc=0; start=$$(date +%s); echo "=== secure Flink: $(SECURE_FLINK_RUN)"; \
	if $(MAKE) --no-print-directory minicluster-up-secure $(SECURE_FLINK_TOKENS); then \
	  ( . $(SECURE_MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) \
	    $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration secure' -count=1 -timeout 20m -run '^($(SECURE_FLINK_RUN))$$' ./framework/flink/ ) || rc=1; \
	else rc=1; fi; \
	$(MAKE) --no-print-directory minicluster-down-secure || rc=1; \
	echo "=== secure Flink: $$(( $$(date +%s) - start )) s"; exit $$rc

# The compatibility suite, which make test runs after the others: for each of COMPAT_VERSIONS, bring
# the plain cluster up with that Hadoop release in $(COMPAT_MINICLUSTER_DIR), run the Go integration
# tests of COMPAT_RUN against it (selected by test name, in the packages test-packages.sh finds), and bring it down
# whatever happened; then for each of COMPAT_SECURE_VERSIONS the Kerberized cluster at privacy with the
# tests of COMPAT_SECURE_RUN. A version the cluster or the Go side cannot serve fails the run.
# COMPAT_RUN covers: the GPU demo job submitted end to end (attached submit, status), the pre-flight's
# over-maximum rejection in check and submit, the AM's own rejection of it, kill, the driver API
# (not-enough-resources events, scale down), the RM's resource types, maximum and nodes as the
# pre-flight reads them, yarn-am cluster, yarn-am logs against Hadoop's own LogsCLI, and the wire
# messages field by field against that release's jars. COMPAT_SECURE_RUN: a keytab submit of a GPU job,
# and on 3.3+ its logs. What each version adds: testdata/minicluster/README.md#compatibility-suite-make-test-compat.
COMPAT_VERSIONS ?= 3.1.4 3.2.4 3.3.6 3.5.0
COMPAT_SECURE_VERSIONS ?= 3.1.4 3.5.0
COMPAT_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/compat
COMPAT_RUN ?= TestE2ESampleGPUDemoJobWithRelativePaths|TestE2ETooManyGPUsFailFastNamingTheKey|TestE2EKillRunningJobRemovesStaging|TestE2EDriverModeFinalStatusFollowsTheDriver|TestAMRejectsGPUAmountOverTheMaximum|TestAMNotEnoughResourcesThenScaleDown|TestMiniClusterMetricsAndResourceTypes|TestMiniClusterNodesHaveGPUs|TestMiniClusterNewApplicationMaximum|TestMiniClusterKill|TestClusterCommand|TestLogsOfFinishedApplicationMatchHadoop|TestConformanceWithHadoopJars
COMPAT_SECURE_RUN ?= TestSecureSubmitGPUJobWithKeytab
# Added to COMPAT_SECURE_RUN on 3.3 and later: it reads real aggregated files planted in the 3.3+
# directory layout (3.1 and 3.2 lay them out otherwise).
COMPAT_SECURE_RUN_33 ?= TestSecureLogs
.PHONY: test-compat
test-compat: build $(GOTESTSUM)
	@rc=0; total=$$(date +%s); pkgs=$$(bash $(TEST_PACKAGES) '^($(COMPAT_RUN))$$') || rc=1; \
	for v in $(COMPAT_VERSIONS); do \
	  start=$$(date +%s); echo "=== compat $$v: plain cluster"; \
	  if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(COMPAT_MINICLUSTER_DIR) HADOOP_VERSION=$$v SECURE= RPC_PROTECTION=; then \
	    ( . $(COMPAT_MINICLUSTER_DIR)/env && test "$$YARN_AM_HADOOP_VERSION" = "$$v" && YARN_AM_BIN=$(CURDIR)/$(BIN) \
	      $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -race -tags integration -count=1 -timeout 20m -run '^($(COMPAT_RUN))$$' $$pkgs ) || rc=1; \
	  else rc=1; fi; \
	  $(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(COMPAT_MINICLUSTER_DIR) || rc=1; \
	  echo "=== compat $$v: $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -n "$(strip $(COMPAT_SECURE_VERSIONS))" ]; then bash testdata/minicluster/install-kinit.sh || rc=1; fi; \
	for v in $(COMPAT_SECURE_VERSIONS); do \
	  start=$$(date +%s); echo "=== compat $$v: Kerberized cluster, hadoop.rpc.protection=privacy"; \
	  run='$(COMPAT_SECURE_RUN)'; case $$v in 3.1.*|3.2.*) ;; *) run="$$run$(if $(COMPAT_SECURE_RUN_33),|$(COMPAT_SECURE_RUN_33))" ;; esac; \
	  if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(COMPAT_MINICLUSTER_DIR)/secure HADOOP_VERSION=$$v SECURE=1 RPC_PROTECTION=privacy; then \
	    ( . $(COMPAT_MINICLUSTER_DIR)/secure/env && test "$$YARN_AM_HADOOP_VERSION" = "$$v" && \
	      spkgs=$$(bash $(TEST_PACKAGES) "^($$run)\$$") && \
	      $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration secure' -count=1 -timeout 20m -run "^($$run)\$$" $$spkgs ) || rc=1; \
	  else rc=1; fi; \
	  $(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(COMPAT_MINICLUSTER_DIR)/secure || rc=1; \
	  echo "=== compat $$v secure/privacy: $$(( $$(date +%s) - start )) s"; \
	done; \
	echo "=== compat: $$(( $$(date +%s) - total )) s in all"; exit $$rc

# The fault suite, which make test runs too: jobs that run across an RM failover and a lost
# NodeManager (a cluster started with HA=1), across a work-preserving RM restart (RECOVERY=1), and a
# NodeManager stopped on a cluster with YARN's default expiry (DEFAULT: no fault mode), in
# $(FAULTS_MINICLUSTER_DIR); the tests have the build tag `integration && faults` and fail without the
# right cluster. Each cluster is brought down whatever happened.
FAULTS_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/faults
.PHONY: test-faults
test-faults: build $(GOTESTSUM)
	@rc=0; for mode in HA RECOVERY DEFAULT; do \
	  start=$$(date +%s); echo "=== faults: $$mode=1 cluster"; \
	  run='^(TestFaultRMFailover|TestFaultNodeManagerLost)$$'; [ $$mode = RECOVERY ] && run='^TestFaultRMRestart$$'; \
	  [ $$mode = DEFAULT ] && run='^TestLivenessNodeManagerStopOnTheDefaultCluster$$'; \
	  if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(FAULTS_MINICLUSTER_DIR) $$mode=1 SECURE= RPC_PROTECTION=; then \
	    ( . $(FAULTS_MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) \
	      $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration faults' -count=1 -timeout 20m -run "$$run" ./am/ ) || rc=1; \
	  else rc=1; fi; \
	  $(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(FAULTS_MINICLUSTER_DIR) || rc=1; \
	  echo "=== faults $$mode: $$(( $$(date +%s) - start )) s"; \
	done; exit $$rc

# The liveness test with the RM's whole NodeManager expiry waited out (about 13 minutes): after the AM
# replaced the lost TaskExecutor, the RM's own LOST report brings no second replacement. Not in make
# test (its budget); make test-faults runs the same test up to the replacement and the job's success.
.PHONY: test-liveness-expiry
test-liveness-expiry: build $(GOTESTSUM)
	@rc=0; if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(FAULTS_MINICLUSTER_DIR) DEFAULT=1 SECURE= RPC_PROTECTION=; then \
	  ( . $(FAULTS_MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) YARN_AM_LIVENESS_FULL_EXPIRY=1 \
	    $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration faults' -count=1 -timeout 30m -run '^TestLivenessNodeManagerStopOnTheDefaultCluster$$' ./am/ ) || rc=1; \
	else rc=1; fi; \
	$(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(FAULTS_MINICLUSTER_DIR) || rc=1; exit $$rc

# The node-label suite, which make test runs too: a LABELS=1 cluster in $(LABELS_MINICLUSTER_DIR)
# and the tests of build tag `integration && labels` (am/labels_integration_test.go), which fail
# without it; the cluster is brought down whatever happened. The same cluster runs with PLACEMENT=1
# (the placement-processor handler, a third NodeManager) for the SchedulingRequest test beside them
# (TestPlacementSchedulingRequests*, am/placement_labels_integration_test.go): no cluster of its own.
LABELS_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/labels
.PHONY: test-labels
test-labels: build $(GOTESTSUM)
	@rc=0; start=$$(date +%s); echo "=== labels: LABELS=1 cluster"; \
	if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(LABELS_MINICLUSTER_DIR) LABELS=1 PLACEMENT=1 HA= RECOVERY= SECURE= RPC_PROTECTION=; then \
	  ( . $(LABELS_MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) \
	    $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration labels' -count=1 -timeout 20m -run '^(TestLabels|TestPlacementSchedulingRequests)' ./am/ ) || rc=1; \
	else rc=1; fi; \
	$(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(LABELS_MINICLUSTER_DIR) || rc=1; \
	echo "=== labels: $$(( $$(date +%s) - start )) s"; exit $$rc

# The preemption suite, which make test runs too: a PREEMPTION=1 cluster in
# $(PREEMPTION_MINICLUSTER_DIR) and the test of build tag `integration && preemption`
# (am/preemption_integration_test.go: a PyTorch gang in batch warned, checkpointed and resumed after
# a job in urgent took its GPUs; framework/flink/preemption_integration_test.go: a Flink job
# checkpointed on the warning and restored after a job in urgent took its TaskManager), which fails
# without it, the torch environment, the Flink home or the test job: am's TestPreemption*, then
# framework/flink's PREEMPTION_FLINK_RUN (its other TestPreemption* are unit tests, which the
# integration run has), one after the other as when they were one package's, since both count the
# queues' resources. The cluster is brought down whatever happened.
PREEMPTION_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/preemption
PREEMPTION_FLINK_RUN ?= TestPreemptionCheckpointsAFlinkJob
.PHONY: test-preemption
test-preemption: build torch-env flink-dist flink-job $(GOTESTSUM)
	@rc=0; start=$$(date +%s); echo "=== preemption: PREEMPTION=1 cluster"; \
	if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(PREEMPTION_MINICLUSTER_DIR) PREEMPTION=1 LABELS= HA= RECOVERY= SECURE= RPC_PROTECTION=; then \
	  ( . $(PREEMPTION_MINICLUSTER_DIR)/env && export YARN_AM_BIN=$(CURDIR)/$(BIN) YARN_AM_TORCH_PYTHON=$(TORCH_PYTHON) && s=0 && \
	    { $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format standard-verbose --) -tags 'integration preemption' -count=1 -timeout 20m -v -run '^TestPreemption' ./am/ || s=1; } && \
	    { $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format standard-verbose --) -tags 'integration preemption' -count=1 -timeout 20m -v -run '^($(PREEMPTION_FLINK_RUN))$$' ./framework/flink/ || s=1; } && \
	    [ $$s = 0 ] ) || rc=1; \
	else rc=1; fi; \
	$(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(PREEMPTION_MINICLUSTER_DIR) || rc=1; \
	echo "=== preemption: $$(( $$(date +%s) - start )) s"; exit $$rc

# The rolling-logs suite (docs/flink.md#logs-that-roll): the plain cluster with rolling log
# aggregation every 5 s (LOG_ROLL_SEC=5) in $(ROLLING_MINICLUSTER_DIR), and the test that needs it
# (build tag rolling); the cluster is brought down whatever happened.
ROLLING_MINICLUSTER_DIR ?= .minicluster-rolling
test-rolling-logs: build flink-dist flink-job $(GOTESTSUM)
	@rc=0; start=$$(date +%s); echo "=== rolling logs: LOG_ROLL_SEC=5 cluster"; \
	if $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(ROLLING_MINICLUSTER_DIR) LOG_ROLL_SEC=5 PREEMPTION= LABELS= HA= RECOVERY= SECURE= RPC_PROTECTION=; then \
	  ( . $(ROLLING_MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) \
	    $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format standard-verbose --) -tags 'integration rolling' -count=1 -timeout 15m -v -run '^TestFlinkLogsRollAndAreAggregatedWhileTheJobRuns$$' ./framework/flink/ ) || rc=1; \
	else rc=1; fi; \
	$(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(ROLLING_MINICLUSTER_DIR) || rc=1; \
	echo "=== rolling logs: $$(( $$(date +%s) - start )) s"; exit $$rc

# The chaos soak (docs/development.md#chaos-soak): the HA cluster (recovery on, am.max-attempts
# raised) in $(SOAK_MINICLUSTER_DIR), a service job and gang jobs under random faults for
# SOAK_MINUTES, invariants checked every second, a table at the end; SOAK_SEED=N replays a run's
# faults. make test runs a 3-minute one (test-soak). The cluster is brought down whatever happened.
SOAK_MINUTES ?= 15
SOAK_SEED ?=
# A comma-separated subset of the fault kinds (docs/development.md#chaos-soak); empty: all.
SOAK_FAULTS ?=
SOAK_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/soak
.PHONY: soak test-soak
soak: build $(GOTESTSUM)
	@rc=0; start=$$(date +%s); echo "=== chaos soak: $(SOAK_MINUTES) minutes"; \
	if MINICLUSTER_ARGS="--am-max-attempts 100" $(MAKE) --no-print-directory minicluster-up MINICLUSTER_DIR=$(SOAK_MINICLUSTER_DIR) HA=1 RECOVERY= SECURE= RPC_PROTECTION=; then \
	  ( . $(SOAK_MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) SOAK_MINUTES=$(SOAK_MINUTES) SOAK_SEED=$(SOAK_SEED) SOAK_FAULTS=$(SOAK_FAULTS) \
	    $(or $(GOTESTSUM),$(GO) test -v) $(if $(GOTESTSUM),--format standard-verbose --) -tags 'integration soak' -count=1 -timeout $$(( $(SOAK_MINUTES) + 45 ))m -run '^TestSoak$$' ./am/ ) || rc=1; \
	else rc=1; fi; \
	$(MAKE) --no-print-directory minicluster-down MINICLUSTER_DIR=$(SOAK_MINICLUSTER_DIR) || rc=1; \
	echo "=== chaos soak: $$(( $$(date +%s) - start )) s"; exit $$rc
test-soak: soak
