#!/usr/bin/env bash
# Checks the links of README.md and docs/*.md: every relative link resolves to a file in the repository,
# every #anchor to a heading of its page (GitHub's anchor rules), every docs page is linked from the
# README, every docs/PAGE.md#anchor named in the Go code and the commands' usage texts resolves too,
# and no page cites something outside the repository. Prints each problem; exits 1 if any.
# Usage: docs/check-links.sh (from anywhere inside the repository).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

pages=(README.md docs/*.md)
problems=0
fail() { echo "$1"; problems=$((problems + 1)); }

# anchors FILE: the anchors GitHub makes of FILE's headings, one per line (fenced code skipped;
# lower case, characters other than letters, digits, space, '-' and '_' dropped, spaces become '-',
# repeated anchors get -1, -2, ...).
anchors() {
  awk '
    /^```/ { fence = !fence; next }
    fence { next }
    /^#+ / {
      h = $0; sub(/^#+ +/, "", h); h = tolower(h)
      gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
      if (seen[h]++) h = h "-" (seen[h] - 1)
      print h
    }' "$1"
}

# links FILE: "line<TAB>target" of every inline link outside fenced code and inline code spans.
links() {
  awk '
    /^```/ { fence = !fence; next }
    fence { next }
    {
      line = $0; gsub(/`[^`]*`/, "", line)
      while (match(line, /\]\([^)]+\)/)) {
        print NR "\t" substr(line, RSTART + 2, RLENGTH - 3)
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$1"
}

for page in "${pages[@]}"; do
  dir=$(dirname "$page")
  while IFS=$'\t' read -r n target; do
    case "$target" in
      http://* | https://* | mailto:*) continue ;;
      /*) fail "$page:$n: absolute link $target (use a relative one)"; continue ;;
    esac
    file=${target%%#*}
    anchor=
    [[ $target == *#* ]] && anchor=${target#*#}
    if [[ -z $file ]]; then
      file=$page
    else
      file=$dir/$file
      if [[ ! -e $file ]]; then
        fail "$page:$n: $target: no such file"
        continue
      fi
      if ! git ls-files --error-unmatch "$file" >/dev/null 2>&1 && [[ ! -d $file ]] &&
        ! printf '%s\n' "${pages[@]}" | grep -qx "$(realpath --relative-to=. "$file")"; then
        fail "$page:$n: $target: not a file of the repository"
        continue
      fi
    fi
    if [[ -n $anchor && $file == *.md ]] && ! anchors "$file" | grep -qxF -- "$anchor"; then
      fail "$page:$n: $target: no heading with anchor #$anchor in $file"
    fi
  done < <(links "$page")
done

for page in docs/*.md; do
  grep -q "](${page})" README.md || fail "README.md does not link $page"
done

# The Go code's pointers into the docs (comments, errors: "docs/flink.md#memory") and the commands'
# usage texts' (cmd/yarn-am/help/*.txt): each page exists and each anchor is a heading of it.
while IFS=: read -r file n ref; do
  page=${ref%%#*}
  anchor=
  [[ $ref == *#* ]] && anchor=${ref#*#}
  if [[ ! -f $page ]]; then
    fail "$file:$n: $ref: no such page"
  elif [[ -n $anchor ]] && ! anchors "$page" | grep -qxF -- "$anchor"; then
    fail "$file:$n: $ref: no heading with anchor #$anchor in $page"
  fi
done < <(git grep -noE 'docs/[A-Za-z0-9_-]+\.md(#[A-Za-z0-9_-]+)?' -- '*.go' 'cmd/yarn-am/help/*.txt')

# Nothing outside the repository is cited: no design brief, no issue numbers.
if grep -nE 'DESIGN(\.md| §)|[Ii]ssue [0-9]+' "${pages[@]}"; then
  fail "the lines above cite something outside the repository"
fi

if ((problems > 0)); then
  echo "$problems link problem(s)"
  exit 1
fi
echo "links OK: ${#pages[@]} pages"
