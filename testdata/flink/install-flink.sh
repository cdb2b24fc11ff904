#!/usr/bin/env bash
# Lays out a Flink home for yarn-am's tests from PyPI's apache-flink-libraries (docs/flink.md#the-flink-distribution):
# flink-dist is not on Maven Central, and this sdist (1.x and 2.x alike) carries lib/ (flink-dist, log4j), bin/bash-java-utils.jar and
# plugins/external-resource-gpu/. Usage: install-flink.sh VERSION SHA256 DEST.
# Idempotent: DEST/.yarn-am-flink-dist records the sdist's checksum; a home whose marker matches is reused. The home
# is built next to DEST and moved into place, so an interrupted run never leaves a half home that looks complete.
set -euo pipefail
version=$1 sha=$2 dest=$3
marker=$dest/.yarn-am-flink-dist
want="apache-flink-libraries $version sha256 $sha"
if [[ -f $marker && "$(cat "$marker")" == "$want" ]]; then
  echo "flink-dist: reusing $dest ($want)"
  exit 0
fi
parent=$(dirname "$dest")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.flink-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "flink-dist: downloading apache-flink-libraries==$version (sdist, 232 MB for 1.20, 329 MB for 2.3) into $work"
pip=(${PIP:-python3 -m pip})
# pip prepares the sdist's metadata (it runs its setup.py in an isolated build environment); nothing is
# installed.
"${pip[@]}" download --quiet --no-deps --no-binary :all: "apache-flink-libraries==$version" -d "$work/dl"
sdist=$work/dl/apache_flink_libraries-$version.tar.gz
got=$(sha256sum "$sdist" | cut -d' ' -f1)
if [[ $got != "$sha" ]]; then
  echo "flink-dist: checksum of $(basename "$sdist") is $got, want $sha (FLINK_SDIST_SHA256)" >&2
  exit 1
fi
top=apache_flink_libraries-$version
tar -xzf "$sdist" -C "$work" "$top/deps/lib" "$top/deps/bin" "$top/deps/plugins/external-resource-gpu" \
  "$top/deps/licenses" "$top/LICENSE" "$top/NOTICE"
rm -rf "$work/dl"
home=$work/home
mkdir -p "$home/conf" "$home/plugins"
mv "$work/$top/deps/lib" "$work/$top/deps/bin" "$work/$top/deps/licenses" "$home/"
mv "$work/$top/deps/plugins/external-resource-gpu" "$home/plugins/"
mv "$work/$top/LICENSE" "$work/$top/NOTICE" "$home/"
# The binary distribution's conf/config.yaml is the one flink-dist carries as its default configuration
# (among it env.java.opts.all, the JVM options Java 17 needs); take it from the jar rather than writing our own.
python3 - "$home/lib/flink-dist-$version.jar" "$home/conf/config.yaml" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("config.yaml"))
PY
echo "$want" > "$home/.yarn-am-flink-dist"
rm -rf "$dest"
mv "$home" "$dest"
echo "flink-dist: installed $dest ($(du -sh "$dest" | cut -f1))"
