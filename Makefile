# yarn-am — build, test and demo. `make demo` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
BIN := bin/yarn-am
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
MINICLUSTER_DIR := .minicluster

.PHONY: all build vet unit integration test demo protos minicluster-up minicluster-down clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/yarn-am

vet:
	$(GO) vet ./...
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$bad" ]; then echo "gofmt would change: $$bad"; exit 1; fi

# Unit and protocol tests (no cluster needed).
unit:
	$(GO) test -race -count=1 ./...

# Integration tests against the running mini cluster (make minicluster-up first).
integration: build
	test -f $(MINICLUSTER_DIR)/env || { echo "no mini cluster: run 'make minicluster-up' first"; exit 1; }
	source $(MINICLUSTER_DIR)/env && YARN_AM_BIN=$(CURDIR)/$(BIN) $(GO) test -tags integration -count=1 -timeout 30m ./...

# Everything: unit tests, then the mini cluster is started, the integration tests run against it, and it
# is stopped again whatever the result.
test: build vet unit
	$(MAKE) minicluster-up
	rc=0; $(MAKE) integration || rc=$$?; $(MAKE) minicluster-down; exit $$rc

# Regenerates yarnrpc/hadooppb/*.pb.go; installs protoc (Maven Central) and protoc-gen-go into bin/tools.
protos:
	GO=$(GO) yarnrpc/hadooppb/gen.sh

include testdata/minicluster/minicluster.mk

clean:
	rm -rf bin
