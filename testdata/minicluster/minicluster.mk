# Mini YARN + HDFS cluster targets (filled in by the minicluster harness work).
minicluster-up:
	@echo "minicluster-up: not yet implemented"; exit 1

minicluster-down:
	@true
