# Mini YARN + HDFS cluster for integration tests and benchmarks (testdata/minicluster/README.md).
# The work is done by testdata/minicluster/minicluster.sh; these targets only pass the state dir.
MINICLUSTER_SH := testdata/minicluster/minicluster.sh

.PHONY: minicluster-build minicluster-up minicluster-down

# Resolve the Hadoop jars (Maven, only when pom.xml changed) and compile the harness.
minicluster-build:
	@bash $(MINICLUSTER_SH) build

# Start MiniDFSCluster + MiniYARNCluster in the background and wait until ready; writes
# $(MINICLUSTER_DIR)/env. Exits 0 at once if one is already running and ready.
minicluster-up:
	@bash $(MINICLUSTER_SH) up $(MINICLUSTER_DIR)

# Stop it (SIGTERM, then SIGKILL after 60 s, children included). Exits 0 when none runs.
minicluster-down:
	@bash $(MINICLUSTER_SH) down $(MINICLUSTER_DIR)
