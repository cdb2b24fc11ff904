#!/usr/bin/env bash
# test-packages.sh PATTERN: the packages (./dir, one a line) whose _test.go files define a top-level
# test whose name PATTERN matches, as `go test -run PATTERN` matches it (an extended regular
# expression; the suites' patterns are names joined by |, anchored or not). The suites of make test
# that pick tests by name run `go test` on these packages, not on ./...: linking the 41 test binaries
# of ./... with -race cost 24 s of CPU per run with nothing to run (docs/development.md#ci).
#
# With PATTERN of the form ^(A|B|...)$ (a list of names), each name must be a test somewhere: a test
# renamed or removed fails the suite here, where go test -run would have run nothing without a word.
# Exits 1 when no package matches.
set -euo pipefail
pattern="${1:?usage: test-packages.sh PATTERN}"
cd "$(dirname "$0")/../.."

# name<TAB>dir of every top-level test function.
tests="$(git ls-files -z '*_test.go' | xargs -0 grep -HoE '^func Test[A-Za-z0-9_]*\(' |
  sed -E 's|^(.*)/[^/]*_test\.go:func (Test[A-Za-z0-9_]*)\($|\2\t\1|; s|^[^/\t]*_test\.go:func (Test[A-Za-z0-9_]*)\($|\1\t.|')"

if [[ "$pattern" =~ ^\^\((.*)\)\$$ ]]; then
  missing=()
  IFS='|' read -ra names <<<"${BASH_REMATCH[1]}"
  # Every test's name, one a line, matched as a whole line. Not `cut | grep -q`: grep -q exits at its
  # first match, cut may then die of SIGPIPE, and pipefail turned a found test into a missing one.
  all=$'\n'"$(cut -f1 <<<"$tests")"$'\n'
  for n in "${names[@]}"; do
    [[ "$all" == *$'\n'"$n"$'\n'* ]] || missing+=("$n")
  done
  if ((${#missing[@]})); then
    echo "test-packages.sh: no test named ${missing[*]} in any package (the suite's list names it)" >&2
    exit 1
  fi
fi

dirs="$(awk -F'\t' -v re="$pattern" '$1 ~ re { print $2 }' <<<"$tests" | sort -u)"
if [[ -z "$dirs" ]]; then
  echo "test-packages.sh: no test matches $pattern" >&2
  exit 1
fi
sed 's|^\.$|.|; s|^\([^.]\)|./\1|' <<<"$dirs"
