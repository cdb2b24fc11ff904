//go:build integration

package hadooppb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb/internal/hadoopjar"
)

// The Hadoop artifacts whose compiled-in descriptors define the messages in this package. Hadoop's
// jars carry no .proto files (3.4 at least), but each generated outer class keeps its file's
// descriptor; internal/hadoopjar reads them back.
var conformanceArtifacts = []string{"hadoop-common", "hadoop-yarn-api", "hadoop-yarn-common", "hadoop-hdfs-client"}

const defaultHadoopVersion = "3.4.3"

// TestConformanceWithHadoopJars compares every message, field and enum value of this package with
// Hadoop's own definitions, by full name with yarnam.hadoop.* mapped to hadoop.*.
//
// Environment: YARN_AM_HADOOP_VERSION (default 3.4.3) picks the jars; YARN_AM_M2_REPOSITORY (default
// ~/.m2/repository) says where Maven put them. Missing jars skip the test on a workstation but fail it
// when CI or YARN_AM_MINICLUSTER is set, where the mini cluster build must have downloaded them.
func TestConformanceWithHadoopJars(t *testing.T) {
	version := os.Getenv("YARN_AM_HADOOP_VERSION")
	if version == "" {
		version = defaultHadoopVersion
	}
	repo := os.Getenv("YARN_AM_M2_REPOSITORY")
	if repo == "" {
		home, err := os.UserHomeDir()
		require.NoError(t, err, "no home directory to find ~/.m2/repository in; set YARN_AM_M2_REPOSITORY")
		repo = filepath.Join(home, ".m2", "repository")
	}

	var jars, missing []string
	for _, a := range conformanceArtifacts {
		jar := filepath.Join(repo, "org", "apache", "hadoop", a, version, a+"-"+version+".jar")
		if _, err := os.Stat(jar); err != nil {
			missing = append(missing, jar)
			continue
		}
		jars = append(jars, jar)
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("Hadoop %s jars not found (YARN_AM_HADOOP_VERSION=%q, Maven repository %s): %s; "+
			"'make minicluster-up' downloads them, or run "+
			"'mvn -B dependency:get -Dtransitive=false -Dartifact=org.apache.hadoop:<artifact>:%s' for each of %s",
			version, os.Getenv("YARN_AM_HADOOP_VERSION"), repo, strings.Join(missing, ", "), version,
			strings.Join(conformanceArtifacts, ", "))
		if os.Getenv("CI") != "" || os.Getenv("YARN_AM_MINICLUSTER") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	var hadoop []*descriptorpb.FileDescriptorProto
	names := map[string]bool{}
	for _, jar := range jars {
		fds, err := hadoopjar.Jar(jar)
		require.NoError(t, err)
		for _, fd := range fds {
			names[fd.GetName()] = true
		}
		hadoop = append(hadoop, fds...)
	}
	// A broken extractor must not look like "everything is extra".
	// (ProtobufRpcEngine2.proto is not in the list: it appeared in Hadoop 3.3.)
	for _, f := range []string{"RpcHeader.proto", "IpcConnectionContext.proto", "ProtobufRpcEngine.proto",
		"Security.proto", "yarn_protos.proto", "yarn_service_protos.proto", "yarn_security_token.proto"} {
		require.True(t, names[f], "no descriptor for %s in %s", f, strings.Join(jars, ", "))
	}

	diffs, stats := compareToHadoop(ourFiles(t), hadoop)
	t.Logf("Hadoop %s: %d descriptor files read from %d jars; checked %d messages, %d fields, %d enums, %d enum values",
		version, len(hadoop), len(jars), stats.Messages, stats.Fields, stats.Enums, stats.EnumValues)

	// The definitions follow 3.4: against an older Hadoop, what it lacks is expected and only logged;
	// against 3.4 and newer every difference fails, except what newerThanOurs lists for that version.
	strict := !olderThan34(version)
	accepted := map[string]string{}
	for _, n := range newerThanOurs {
		if !olderThan(version, n.since) {
			accepted[n.diff] = n.why
		}
	}
	var failures []string
	for _, d := range diffs {
		if d.kind == diffExtra && !strict {
			t.Logf("not in Hadoop %s (expected for an older version): %s", version, d.what)
			continue
		}
		if why, ok := accepted[d.String()]; ok {
			t.Logf("newer than our definitions, accepted: %s (%s)", d, why)
			delete(accepted, d.String())
			continue
		}
		failures = append(failures, d.String())
	}
	// An accepted difference that no longer shows means the list is stale (or the jars changed).
	for diff := range accepted {
		failures = append(failures, "newerThanOurs lists a difference Hadoop "+version+" does not show: "+diff)
	}
	if len(failures) > 0 {
		t.Errorf("%d difference(s) from Hadoop %s:\n%s", len(failures), version, strings.Join(failures, "\n"))
	}
}

// newerThanOurs lists what a Hadoop release newer than 3.4 (which the definitions follow) adds and
// yarn-am deliberately does not define: each entry is the exact difference the comparison reports,
// accepted from release `since` on. Anything else a newer release adds fails the test, so a new field
// is looked at before it is waved through; docs/development.md#supported-hadoop-versions lists what each
// release was checked against.
var newerThanOurs = []struct {
	since, diff, why string
}{
	{
		since: "3.5.0",
		diff: "missing: .yarnam.hadoop.common.RpcRequestHeaderProto (yarnam_rpc_header.proto vs Hadoop's " +
			"RpcHeader.proto): lacks Hadoop's field optional bytes authorizationHeader = 10",
		why: "an optional request-header field; yarn-am authenticates by SASL (SIMPLE, KERBEROS, TOKEN) and " +
			"leaves it unset, which a 3.5 server serves as before (the compatibility suite on 3.5.0, plain " +
			"and Kerberized at privacy)",
	},
}
