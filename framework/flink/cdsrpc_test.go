package flink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/classfile"
)

// classFile is a class file of name with those supertypes.
func classFile(t *testing.T, name, super string, interfaces ...string) []byte {
	t.Helper()
	b, err := classfile.NewClass(name, super, interfaces...).Bytes()
	require.NoError(t, err)
	return b
}

func TestRPCClassNamesAreThoseOfTheUnpackedRPCJar(t *testing.T) {
	log := strings.Join([]string{
		"java.lang.Object source: shared objects file",
		"org.apache.pekko.actor.ActorSystem source: file:/nm/appcache/application_1_0001/flink-rpc-akka70bd4725-ddd6.jar",
		"scala.Option source: file:/nm/appcache/application_1_0001/flink-rpc-akka70bd4725-ddd6.jar",
		"scala.Option source: file:/nm/appcache/application_1_0001/flink-rpc-akka70bd4725-ddd6.jar",
		"org.apache.flink.runtime.rpc.RpcService source: shared objects file (top)",
		"org.apache.hadoop.conf.Configuration source: file:/m2/hadoop-common-3.4.3.jar",
		"scala.Some source: file:/elsewhere/flink-rpc-akka.jar.bak",
		"a/b.C source: file:/x/flink-rpc-akka1.jar",
		"org.apache.pekko.Done$$Lambda$77/0x0000000800c1 source: org.apache.pekko.Done",
		"",
	}, "\n")
	assert.Equal(t, []string{"org/apache/pekko/actor/ActorSystem", "scala/Option"}, rpcClassNames([]byte(log)))
}

// The RPC jar's classes follow the class list's, each after its supertypes, with the ids the JVM
// reads; a supertype of the class path that the list does not name is named first; a class whose
// supertype cannot be placed is left out.
func TestWithRPCClassesPlacesEachClassAfterItsSupertypes(t *testing.T) {
	names := []byte("java/lang/Object\njava/io/Serializable\n@lambda-proxy x y\njava/lang/Object\norg/apache/flink/runtime/rpc/RpcService\n")
	rpc := map[string]rpcClass{
		"scala/Some":    {super: "scala/Option", interfaces: []string{"java/io/Serializable"}},
		"scala/Option":  {super: "java/lang/Object", interfaces: []string{"scala/Product"}},
		"scala/Product": {super: "java/lang/Object", interfaces: []string{"scala/Equals"}},
		"scala/Equals":  {super: "java/lang/Object"},
		"org/apache/flink/runtime/rpc/pekko/PekkoRpcService": {super: "java/lang/Object", interfaces: []string{"org/apache/flink/runtime/rpc/RpcService", "java/lang/AutoCloseable"}},
		"a/Loop1":  {super: "a/Loop2"},
		"a/Loop2":  {super: "a/Loop1"},
		"a/Orphan": {super: "a/Loop1"},
	}
	order := []string{"scala/Some", "org/apache/flink/runtime/rpc/pekko/PekkoRpcService", "a/Orphan", "scala/Equals"}
	got, n := withRPCClasses(names, rpc, order, "/d/flink-rpc-akka.jar")
	assert.Equal(t, 5, n)
	assert.Equal(t, strings.Join([]string{
		"java/lang/Object id: 0",
		"java/io/Serializable id: 1",
		"@lambda-proxy x y",
		"org/apache/flink/runtime/rpc/RpcService id: 2",
		"java/lang/AutoCloseable id: 7",
		"scala/Equals id: 3 super: 0 source: /d/flink-rpc-akka.jar",
		"scala/Product id: 4 super: 0 interfaces: 3 source: /d/flink-rpc-akka.jar",
		"scala/Option id: 5 super: 0 interfaces: 4 source: /d/flink-rpc-akka.jar",
		"scala/Some id: 6 super: 5 interfaces: 1 source: /d/flink-rpc-akka.jar",
		"org/apache/flink/runtime/rpc/pekko/PekkoRpcService id: 8 super: 0 interfaces: 2 7 source: /d/flink-rpc-akka.jar",
		"",
	}, "\n"), string(got))
}

// The RPC jar comes out of the home's flink-dist as it is; a flink-dist without one is an error.
func TestUnpackRPCJarTakesFlinkDistsOwn(t *testing.T) {
	f := newCDSFixture(t)
	dist := filepath.Join(f.dir, "flink/lib/flink-dist-1.20.5.jar")
	writeZip(t, dist, map[string][]byte{"org/apache/flink/Foo.class": classFile(t, "org/apache/flink/Foo", "java/lang/Object")})
	home, err := flinkdist.OpenHome(filepath.Join(f.dir, "flink"))
	require.NoError(t, err)
	assert.ErrorContains(t, unpackRPCJar(home, filepath.Join(t.TempDir(), "rpc.jar")), "has no flink-rpc-akka.jar")

	// A jar inside the jar, as flink-dist carries it.
	inner := filepath.Join(t.TempDir(), "inner.jar")
	writeZip(t, inner, map[string][]byte{"scala/Some.class": classFile(t, "scala/Some", "scala/Option", "java/io/Serializable"),
		"scala/Bad.class": []byte("not a class")})
	innerBytes, err := os.ReadFile(inner)
	require.NoError(t, err)
	writeZip(t, dist, map[string][]byte{rpcJarEntry: innerBytes})

	out := filepath.Join(t.TempDir(), "rpc.jar")
	require.NoError(t, unpackRPCJar(home, out))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, innerBytes, got)
	classes, err := readRPCClasses(out, []string{"scala/Some", "scala/Bad", "scala/Absent"})
	require.NoError(t, err)
	assert.Equal(t, map[string]rpcClass{"scala/Some": {super: "scala/Option", interfaces: []string{"java/io/Serializable"}}}, classes)
	// Unpacked once: an existing file is not written over.
	assert.Error(t, unpackRPCJar(home, out))
}
