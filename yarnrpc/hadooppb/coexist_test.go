package hadooppb

import (
	"testing"

	// colinmarc/hdfs registers Hadoop's own file names and hadoop.* packages; protobuf-go panics at
	// init on a conflict, so merely linking both proves ours are distinct.
	hdfs "github.com/colinmarc/hdfs/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

func TestCoexistsWithColinmarcHDFS(t *testing.T) {
	var _ *hdfs.Client
	theirs, err := protoregistry.GlobalFiles.FindFileByPath("RpcHeader.proto")
	require.NoError(t, err, "colinmarc/hdfs's RpcHeader.proto should be registered in this binary")
	assert.Equal(t, protoreflect.FullName("hadoop.common"), theirs.Package())

	ours, err := protoregistry.GlobalTypes.FindMessageByName("yarnam.hadoop.common.TokenProto")
	require.NoError(t, err)
	assert.Equal(t, "yarnam_security.proto", ours.Descriptor().ParentFile().Path())
}
