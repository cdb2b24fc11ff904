# Flink on yarn-am (docs/flink.md): a real Flink distribution and yarn-am's Flink test job, both outside git.
#   make flink-dist        Flink FLINK_VERSION's home in $(FLINK_HOME_CACHE), from PyPI's apache-flink-libraries
#   make flink-job         testdata/flink/job built with Maven into bin/flink-job/yarn-am-flink-job.jar
#   make test-flink-local  framework/flink/dist's tests against that Flink, on this machine, without YARN
# 1.20 is Flink's long-term-support line and its sdist is the smaller download (232 MB; 2.x is a 329 MB wheel);
# it reads both conf/config.yaml and the legacy flink-conf.yaml (docs/flink.md#the-flink-distribution).
FLINK_VERSION ?= 1.20.5
FLINK_SDIST_SHA256 ?= e6aee62ea1a1fe7b32e28894ad079f3f1a50a372a4caac3df52405267f4228c8
YARN_AM_CACHE ?= $(HOME)/.cache/yarn-am
FLINK_HOME_CACHE ?= $(YARN_AM_CACHE)/flink-$(FLINK_VERSION)
FLINK_JOB_JAR := bin/flink-job/yarn-am-flink-job.jar

.PHONY: flink-dist flink-job test-flink-local

flink-dist:
	bash testdata/flink/install-flink.sh $(FLINK_VERSION) $(FLINK_SDIST_SHA256) $(FLINK_HOME_CACHE)

$(FLINK_JOB_JAR): testdata/flink/job/pom.xml $(shell find testdata/flink/job/src -name '*.java')
	@# Maven 3.8's console prints ANSI resets even in batch mode (-Dstyle.color=never is 3.9's): strip them.
	mvn -q -B -Dstyle.color=never -f testdata/flink/job/pom.xml package -Dflink.version=$(FLINK_VERSION) -Dyarnam.out=$(CURDIR)/bin/flink-job 2>&1 | sed 's/\x1b\[[0-9;]*m//g'

flink-job: $(FLINK_JOB_JAR)

test-flink-local: flink-dist flink-job
	YARN_AM_FLINK_HOME=$(FLINK_HOME_CACHE) YARN_AM_FLINK_JOB=$(CURDIR)/$(FLINK_JOB_JAR) \
	  $(GO) test -race -tags flink -count=1 -timeout 10m -v ./framework/flink/dist/
