#!/usr/bin/env bash
# split-packages.sh cluster|rest: make test's split of the module's packages (./dir, on one line).
# cluster: those with a test file of the integration build tag (//go:build integration, alone or with
# another tag), whose tests need the mini cluster; rest: every other package (and testdata/bench, the
# benchmark's parsers, which ./... leaves out as a testdata directory), whose tests need none
# and which make test runs with -race before the cluster is up, beside the secure suite, so that the
# integration run (CPU-bound on 2 cores: the cluster's and Flink's JVMs) does not also compile and
# run them (docs/development.md#ci).
set -euo pipefail
which="${1:?usage: split-packages.sh cluster|rest}"
cd "$(dirname "$0")/../.."
cluster="$(git ls-files -z '*_test.go' | xargs -0 grep -lE '^//go:build (.*[ (!&|])?integration([ )&|].*)?$' |
  xargs -r -n1 dirname | sed 's|^|./|; s|^\./\.$|.|' | sort -u)"
case "$which" in
cluster)
  [[ -n "$cluster" ]] || { echo "split-packages.sh: no package has integration tests" >&2; exit 1; }
  echo $cluster
  ;;
rest)
  all="$(go list -f '{{.Dir}}' ./... ./testdata/bench | sed "s|^$PWD|.|; s|^\./|./|")"
  rest="$(grep -vxF -f <(printf '%s\n' $cluster) <<<"$all" || true)"
  [[ -n "$rest" ]] || { echo "split-packages.sh: no package without integration tests" >&2; exit 1; }
  echo $rest
  ;;
*)
  echo "split-packages.sh: want cluster or rest, not $which" >&2
  exit 2
  ;;
esac
