package hadooppb

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func gpuResource() *ResourceProto {
	return &ResourceProto{
		Memory:       proto.Int64(4096),
		VirtualCores: proto.Int32(2),
		ResourceValueMap: []*ResourceInformationProto{
			{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(2)},
		},
	}
}

func TestResourceProtoWireBytes(t *testing.T) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(gpuResource())
	require.NoError(t, err)
	// What a Hadoop RM expects, byte for byte: memory (1, varint 4096), virtual_cores (2, varint 2),
	// resource_value_map (3, length-delimited) holding key (1) "yarn.io/gpu" and value (2) 2.
	want := []byte{
		0x08, 0x80, 0x20,
		0x10, 0x02,
		0x1a, 0x0f, 0x0a, 0x0b, 'y', 'a', 'r', 'n', '.', 'i', 'o', '/', 'g', 'p', 'u', 0x10, 0x02,
	}
	assert.Equal(t, want, b)

	var back ResourceProto
	require.NoError(t, proto.Unmarshal(b, &back))
	assert.True(t, proto.Equal(gpuResource(), &back))
	require.Len(t, back.GetResourceValueMap(), 1)
	assert.Equal(t, "yarn.io/gpu", back.GetResourceValueMap()[0].GetKey())
	assert.Equal(t, int64(2), back.GetResourceValueMap()[0].GetValue())
}

func TestApplicationSubmissionContextRoundTrip(t *testing.T) {
	asc := &ApplicationSubmissionContextProto{
		ApplicationId:   &ApplicationIdProto{Id: proto.Int32(7), ClusterTimestamp: proto.Int64(1700000000000)},
		ApplicationName: proto.String("train"),
		Priority:        &PriorityProto{Priority: proto.Int32(1)},
		AmContainerSpec: &ContainerLaunchContextProto{
			LocalResources: []*StringLocalResourceMapProto{{
				Key: proto.String("yarn-am"),
				Value: &LocalResourceProto{
					Resource:   &URLProto{Scheme: proto.String("hdfs"), Host: proto.String("nn"), Port: proto.Int32(8020), File: proto.String("/apps/yarn-am")},
					Size:       proto.Int64(1 << 20),
					Timestamp:  proto.Int64(1700000000001),
					Type:       LocalResourceTypeProto_FILE.Enum(),
					Visibility: LocalResourceVisibilityProto_APPLICATION.Enum(),
				},
			}},
			Environment: []*StringStringMapProto{{Key: proto.String("CUDA_VISIBLE_DEVICES"), Value: proto.String("")}},
			Command:     []string{"./yarn-am", "am"},
		},
		Resource:        gpuResource(),
		ApplicationTags: []string{"yarn-am"},
		AmContainerResourceRequest: []*ResourceRequestProto{{
			Priority: &PriorityProto{Priority: proto.Int32(0)}, ResourceName: proto.String("*"),
			Capability: gpuResource(), NumContainers: proto.Int32(1),
		}},
	}
	b, err := proto.Marshal(asc)
	require.NoError(t, err)

	var back ApplicationSubmissionContextProto
	require.NoError(t, proto.Unmarshal(b, &back))
	assert.True(t, proto.Equal(asc, &back))
	assert.Equal(t, "yarn.io/gpu", back.GetResource().GetResourceValueMap()[0].GetKey())

	// Hadoop's defaults come through for fields nobody set.
	assert.Equal(t, "default", back.GetQueue())
	assert.Equal(t, "YARN", back.GetApplicationType())
	assert.True(t, back.GetCancelTokensWhenComplete())
	assert.Equal(t, int64(-1), back.GetAttemptFailuresValidityInterval())
	assert.Equal(t, int64(-1), back.GetAmContainerResourceRequest()[0].GetAllocationRequestId())
	assert.True(t, back.GetAmContainerResourceRequest()[0].GetRelaxLocality())
}

func TestApplicationSubmissionContextWireBytes(t *testing.T) {
	// proto2 presence: an explicitly set false is sent, unlike an unset field, which the RM reads as
	// Hadoop's default.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&ApplicationSubmissionContextProto{
		ApplicationName: proto.String("train"),
		UnmanagedAm:     proto.Bool(false),
		MaxAppAttempts:  proto.Int32(2),
	})
	require.NoError(t, err)
	// application_name (2, bytes), unmanaged_am (7, varint), maxAppAttempts (8, varint).
	assert.Equal(t, []byte{0x12, 0x05, 't', 'r', 'a', 'i', 'n', 0x38, 0x00, 0x40, 0x02}, b)
}

func TestUnknownFieldsSurviveResend(t *testing.T) {
	// A field from a Hadoop newer than these definitions must not be dropped when yarn-am decodes a
	// message and sends it on.
	b, err := proto.Marshal(gpuResource())
	require.NoError(t, err)
	b = protowire.AppendTag(b, 99, protowire.VarintType)
	b = protowire.AppendVarint(b, 5)

	var r ResourceProto
	require.NoError(t, proto.Unmarshal(b, &r))
	again, err := proto.Marshal(&r)
	require.NoError(t, err)
	assert.Equal(t, b, again)
}
