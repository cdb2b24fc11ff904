package client

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// TestSubmissionContextLogAggregation: [log-aggregation]'s patterns travel as YARN's
// LogAggregationContext, field 14 of the ApplicationSubmissionContext, each pattern at Hadoop's field
// number (include 1, exclude 2, rolled include 3, rolled exclude 4), a pattern not given absent (the
// NodeManager then reads no filter, not the proto's default); a job without the table sends none.
func TestSubmissionContextLogAggregation(t *testing.T) {
	o := testAMOptions(t)
	sc, err := SubmissionContext(o)
	require.NoError(t, err)
	assert.Nil(t, sc.LogAggregationContext)

	o.Job.LogAggregation = jobfile.LogAggregation{Exclude: `\.hprof$`, RolledInclude: `^taskmanager\.log\.[0-9]+$`, Set: true}
	sc, err = SubmissionContext(o)
	require.NoError(t, err)
	wire, err := proto.Marshal(sc)
	require.NoError(t, err)
	var back hadooppb.ApplicationSubmissionContextProto
	require.NoError(t, proto.Unmarshal(wire, &back))
	lac := back.GetLogAggregationContext()
	require.NotNil(t, lac)
	assert.Equal(t, `\.hprof$`, lac.GetExcludePattern())
	assert.Equal(t, `^taskmanager\.log\.[0-9]+$`, lac.GetRolledLogsIncludePattern())
	assert.Nil(t, lac.IncludePattern)
	assert.Nil(t, lac.RolledLogsExcludePattern)

	// The raw fields, as Hadoop's yarn_protos.proto numbers them.
	var inner []byte
	for b := wire; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		b = b[n:]
		if num == 14 {
			require.Equal(t, protowire.BytesType, typ)
			v, m := protowire.ConsumeBytes(b)
			require.GreaterOrEqual(t, m, 0)
			inner = v
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		require.GreaterOrEqual(t, m, 0)
		b = b[m:]
	}
	fields := map[protowire.Number]string{}
	for b := inner; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0)
		require.Equal(t, protowire.BytesType, typ)
		v, m := protowire.ConsumeBytes(b[n:])
		require.GreaterOrEqual(t, m, 0)
		fields[num] = string(v)
		b = b[n+m:]
	}
	assert.Equal(t, map[protowire.Number]string{2: `\.hprof$`, 3: `^taskmanager\.log\.[0-9]+$`}, fields)
}
