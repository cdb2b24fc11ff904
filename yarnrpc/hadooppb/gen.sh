#!/usr/bin/env bash
# Regenerates yarnrpc/hadooppb/*.pb.go from the .proto files next to this script.
#
# Installs its tools into <repo>/bin/tools (no root, nothing outside the work tree except the Maven and Go
# caches):
#   - protoc, from Maven Central (com.google.protobuf:protoc:<PROTOC_VERSION>:exe:linux-x86_64);
#   - protoc-gen-go, at the google.golang.org/protobuf version that go.mod requires, so the generated
#     code and the runtime never disagree.
# Tools already present at the wanted version are reused, so a second run only regenerates.
#
# Environment:
#   PROTOC_VERSION  Maven version of protoc (default below; Maven spells it 4.x.y for protoc x.y)
#   MVN             Maven command (default: mvn)
#   GO              Go command (default: go)
set -euo pipefail

PROTOC_VERSION="${PROTOC_VERSION:-4.34.2}"
MVN="${MVN:-mvn}"
GO="${GO:-go}"
DEP_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tools="$root/bin/tools"
mkdir -p "$tools"

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) classifier=linux-x86_64 ;;
Linux-aarch64) classifier=linux-aarch_64 ;;
Darwin-x86_64) classifier=osx-x86_64 ;;
Darwin-arm64) classifier=osx-aarch_64 ;;
*)
	echo "gen.sh: no protoc build on Maven Central for $(uname -s)-$(uname -m);" \
		"supported: Linux x86_64/aarch64, Darwin x86_64/arm64" >&2
	exit 1
	;;
esac

# protoc --version prints "libprotoc 34.2" for Maven version 4.34.2.
want_protoc="libprotoc ${PROTOC_VERSION#4.}"
if [[ ! -x "$tools/protoc" ]] || [[ "$("$tools/protoc" --version 2>/dev/null)" != "$want_protoc" ]]; then
	echo "gen.sh: installing protoc $PROTOC_VERSION ($classifier) from Maven Central into $tools"
	dl="$(mktemp -d)"
	trap 'rm -rf "$dl"' EXIT
	if ! "$MVN" -B -q "$DEP_PLUGIN:copy" \
		-Dartifact="com.google.protobuf:protoc:$PROTOC_VERSION:exe:$classifier" \
		-DoutputDirectory="$dl" -Dmdep.stripVersion=true >"$dl/mvn.log" 2>&1; then
		cat "$dl/mvn.log" >&2
		echo "gen.sh: could not fetch com.google.protobuf:protoc:$PROTOC_VERSION:exe:$classifier;" \
			"set PROTOC_VERSION to one listed at" \
			"https://repo.maven.apache.org/maven2/com/google/protobuf/protoc/" >&2
		exit 1
	fi
	install -m 0755 "$dl/protoc-$classifier.exe" "$tools/protoc"
fi

gen_go_version="$(cd "$root" && "$GO" list -m -f '{{.Version}}' google.golang.org/protobuf)"
want_gen_go="protoc-gen-go $gen_go_version"
if [[ ! -x "$tools/protoc-gen-go" ]] || [[ "$("$tools/protoc-gen-go" --version 2>/dev/null)" != "$want_gen_go" ]]; then
	echo "gen.sh: installing protoc-gen-go $gen_go_version into $tools"
	(cd "$root" && GOBIN="$tools" "$GO" install "google.golang.org/protobuf/cmd/protoc-gen-go@$gen_go_version")
fi

shopt -s nullglob
# Generated files of protos that no longer exist must not linger.
for pb in "$here"/*.pb.go; do
	[[ -f "${pb%.pb.go}.proto" ]] || rm -f "$pb"
done

protos=("$here"/*.proto)
if ((${#protos[@]} == 0)); then
	echo "gen.sh: no .proto files in $here; tools are installed, nothing to generate"
	exit 0
fi

names=()
for p in "${protos[@]}"; do names+=("$(basename "$p")"); done
cd "$here"
"$tools/protoc" \
	--proto_path=. \
	--plugin=protoc-gen-go="$tools/protoc-gen-go" \
	--go_out=. --go_opt=paths=source_relative \
	"${names[@]}"
echo "gen.sh: generated ${#names[@]} file(s) with $("$tools/protoc" --version), $want_gen_go"
