# Mini YARN + HDFS cluster for integration tests and benchmarks (testdata/minicluster/README.md).
# The work is done by testdata/minicluster/minicluster.sh; these targets only pass the state dir.
MINICLUSTER_SH := testdata/minicluster/minicluster.sh
# Kerberos mode: make minicluster-up SECURE=1 [RPC_PROTECTION=authentication|integrity|privacy].
SECURE ?=
RPC_PROTECTION ?=
# Where minicluster-up-secure keeps its cluster: beside the plain one (it may run at the same time).
SECURE_MINICLUSTER_DIR ?= $(MINICLUSTER_DIR)/secure

.PHONY: minicluster-build minicluster-up minicluster-down minicluster-check minicluster-up-secure \
  minicluster-down-secure minicluster-check-secure

# Resolve the Hadoop jars (Maven, only when pom.xml changed) and compile the harness.
minicluster-build:
	@bash $(MINICLUSTER_SH) build

# Start MiniDFSCluster + MiniYARNCluster in the background and wait until ready; writes
# $(MINICLUSTER_DIR)/env. Exits 0 at once if one is already running and ready.
minicluster-up:
	@MINICLUSTER_SECURE=$(SECURE) MINICLUSTER_RPC_PROTECTION=$(RPC_PROTECTION) \
	  bash $(MINICLUSTER_SH) up $(MINICLUSTER_DIR)

# Stop it (SIGTERM, then SIGKILL after 60 s, children included). Exits 0 when none runs.
minicluster-down:
	@bash $(MINICLUSTER_SH) down $(MINICLUSTER_DIR)

# Java-side proof of the running cluster: SecureCheck (Kerberized only), then DistributedShell.
minicluster-check:
	@bash $(MINICLUSTER_SH) check $(MINICLUSTER_DIR)

# The Kerberized cluster in $(SECURE_MINICLUSTER_DIR) (default .minicluster/secure), beside the plain
# one: source $(SECURE_MINICLUSTER_DIR)/env for the secure suite. RPC_PROTECTION as above.
minicluster-up-secure:
	@MINICLUSTER_SECURE=1 MINICLUSTER_RPC_PROTECTION=$(RPC_PROTECTION) \
	  bash $(MINICLUSTER_SH) up $(SECURE_MINICLUSTER_DIR)

minicluster-down-secure:
	@bash $(MINICLUSTER_SH) down $(SECURE_MINICLUSTER_DIR)

minicluster-check-secure:
	@bash $(MINICLUSTER_SH) check $(SECURE_MINICLUSTER_DIR)

# The secure suite, which make test runs too: for each level of SECURE_LEVELS, bring the Kerberized
# cluster up in $(SECURE_MINICLUSTER_DIR), run `go test -tags integration -run Secure ./...` with its
# env, and bring it down (whatever happened). The job that outlives the token max lifetime (over 3
# minutes) runs at SECURE_LONG_LEVELS only; the other levels run the submit, kinit-advice and log-scan
# tests. kinit (Debian's krb5-user) is installed once by install-kinit.sh. The plain cluster runs
# beside it (started here unless already up, and then stopped again): its RM address goes to the
# tests as YARN_AM_PLAIN_RM_ADDRESS, the server TestSecureClientRefusesSimpleFallback must refuse.
SECURE_LEVELS ?= authentication integrity privacy
SECURE_LONG_LEVELS ?= privacy
.PHONY: test-secure
test-secure: $(GOTESTSUM)
	@bash testdata/minicluster/install-kinit.sh
	@rc=0; plain_was_up=0; [ -f $(MINICLUSTER_DIR)/env ] && plain_was_up=1; \
	$(MAKE) --no-print-directory minicluster-up || rc=1; \
	YARN_AM_PLAIN_RM_ADDRESS=$$( . $(MINICLUSTER_DIR)/env 2>/dev/null && echo "$$YARN_AM_RM_ADDRESS"); \
	export YARN_AM_PLAIN_RM_ADDRESS; \
	for lvl in $(SECURE_LEVELS); do \
	  start=$$(date +%s); echo "=== secure suite, hadoop.rpc.protection=$$lvl"; \
	  long=0; for l in $(SECURE_LONG_LEVELS); do [ "$$l" = "$$lvl" ] && long=1; done; \
	  if $(MAKE) --no-print-directory minicluster-up-secure RPC_PROTECTION=$$lvl; then \
	    run=Secure; [ $$long = 1 ] && run='Secure|LongJob'; \
	    ( . $(SECURE_MINICLUSTER_DIR)/env && \
	      $(or $(GOTESTSUM),go test) $(if $(GOTESTSUM),--format $(GOTEST_FORMAT) --) -tags 'integration secure' -count=1 -timeout 20m -run "$$run" ./... ) || rc=1; \
	  else rc=1; fi; \
	  $(MAKE) --no-print-directory minicluster-down-secure || rc=1; \
	  echo "=== $$lvl: $$(( $$(date +%s) - start )) s"; \
	done; \
	[ $$plain_was_up = 1 ] || $(MAKE) --no-print-directory minicluster-down || rc=1; \
	exit $$rc
