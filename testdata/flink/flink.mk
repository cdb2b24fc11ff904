# Flink on yarn-am (docs/flink.md): a real Flink distribution and yarn-am's Flink test job, both outside git.
#   make flink-dist        Flink FLINK_VERSION's home in $(FLINK_HOME_CACHE) and FLINK2_VERSION's in
#                          $(FLINK2_HOME_CACHE), each from PyPI's apache-flink-libraries sdist
#   make flink-job         testdata/flink/job built with Maven against each: bin/flink-job/yarn-am-flink-job.jar
#                          (1.20) and bin/flink-job/yarn-am-flink-job-2.jar (2.x)
#   make test-flink-local  framework/flink/flinkdist's tests against that Flink, on this machine, without YARN
#   make test-flink-memory the memory check, JVM flags and key fixtures against every Flink home (1.20 and 2.x)
# 1.20 is Flink's long-term-support line (232 MB); it reads both conf/config.yaml and the legacy flink-conf.yaml.
# 2.3 (329 MB) is the newest line, with its application layer (docs/flink.md#the-flink-distribution). The tests
# run both; a version's sdist checksum is pinned beside it.
FLINK_VERSION ?= 1.20.5
FLINK_SDIST_SHA256 ?= e6aee62ea1a1fe7b32e28894ad079f3f1a50a372a4caac3df52405267f4228c8
YARN_AM_CACHE ?= $(HOME)/.cache/yarn-am
FLINK_HOME_CACHE ?= $(YARN_AM_CACHE)/flink-$(FLINK_VERSION)
FLINK2_VERSION ?= 2.3.0
FLINK2_SDIST_SHA256 ?= 570bf8831d3c1336311e924e97119e52d8842e5485a4a7709ff9a92db709b006
FLINK2_HOME_CACHE ?= $(YARN_AM_CACHE)/flink-$(FLINK2_VERSION)
FLINK_JOB_JAR := bin/flink-job/yarn-am-flink-job.jar
FLINK2_JOB_JAR := bin/flink-job/yarn-am-flink-job-2.jar
FLINK_JOB_SRC := testdata/flink/job/pom.xml $(shell find testdata/flink/job/src -name '*.java')
# Maven 3.8's console prints ANSI resets even in batch mode (-Dstyle.color=never is 3.9's): strip them.
FLINK_MVN = mvn -q -B -Dstyle.color=never -f testdata/flink/job/pom.xml package -Dyarnam.out=$(CURDIR)/bin/flink-job

.PHONY: flink-dist flink-job test-flink-local test-flink-memory

flink-dist:
	bash testdata/flink/install-flink.sh $(FLINK_VERSION) $(FLINK_SDIST_SHA256) $(FLINK_HOME_CACHE)
	bash testdata/flink/install-flink.sh $(FLINK2_VERSION) $(FLINK2_SDIST_SHA256) $(FLINK2_HOME_CACHE)

# pipefail: a failed compile fails make, not only sed.
$(FLINK_JOB_JAR): $(FLINK_JOB_SRC)
	set -o pipefail; $(FLINK_MVN) -Dflink.version=$(FLINK_VERSION) -Dyarnam.jar=yarn-am-flink-job 2>&1 | sed 's/\x1b\[[0-9;]*m//g'

$(FLINK2_JOB_JAR): $(FLINK_JOB_SRC)
	set -o pipefail; $(FLINK_MVN) -Dflink.version=$(FLINK2_VERSION) -Dyarnam.jar=yarn-am-flink-job-2 2>&1 | sed 's/\x1b\[[0-9;]*m//g'

flink-job: $(FLINK_JOB_JAR) $(FLINK2_JOB_JAR)

test-flink-local: flink-dist flink-job
	YARN_AM_FLINK_HOME=$(FLINK_HOME_CACHE) YARN_AM_FLINK_JOB=$(CURDIR)/$(FLINK_JOB_JAR) \
	  $(GO) test -race -tags flink -count=1 -timeout 10m -v ./framework/flink/flinkdist/
	$(MAKE) --no-print-directory test-flink-memory FLINK_MEMORY_HOMES=$(FLINK2_HOME_CACHE)

# The tests that run only a Flink home's tools, no job (docs/flink.md#tests): the memory check and the
# JVM flags against each version's BashJavaUtils, and the key fixtures of removedkeys.go against each
# version's jars, with BashJavaUtils asked in one JVM per test (TestBashJavaUtilsLoopAnswersAsItsOwnJVM
# holds it to a JVM per answer), and the delegation-token jar in a JVM against each version's interfaces
# and the mini cluster's Hadoop jars (TestTokenJarServesFlinksTokenFramework: the target runs minicluster-build;
# about 10-20 s); make test runs them on both homes (about 40 s each on the shared machine).
FLINK_MEMORY_HOMES ?= $(FLINK_HOME_CACHE) $(FLINK2_HOME_CACHE)
FLINK_HOME_TESTS := ^(TestLog4jRollsWithTheHomesLog4j|TestCheckMemoryAgreesWithBashJavaUtils|TestComputedResourceParamsEqualBashJavaUtils|TestKeyFixturesAreTheHomesKeys|TestBashJavaUtilsLoopAnswersAsItsOwnJVM|TestTokenJarServesFlinksTokenFramework)$$

test-flink-memory: flink-dist minicluster-build $(GOTESTSUM)
	@rc=0; for h in $(FLINK_MEMORY_HOMES); do \
	  echo "=== test-flink-memory: $$h"; \
	  YARN_AM_FLINK_HOME=$$h $(or $(GOTESTSUM),$(GO) test -v) $(if $(GOTESTSUM),--format standard-verbose --) -tags flink -count=1 -timeout 10m -run '$(FLINK_HOME_TESTS)' ./framework/flink/flinkdist/ || rc=1; \
	done; exit $$rc
