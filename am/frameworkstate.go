package am

import (
	"context"
	"errors"
	"fmt"

	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// A framework's own state across the AM's attempts (framework.AMStart.State: a Flink job's latest
// completed checkpoint, docs/flink.md#when-the-applicationmaster-is-lost) lives beside the AM's
// (durable.go) in an extended attribute of the staging directory: setting one is a single atomic
// NameNode call — no reader sees half a value, as a write and a rename would also give — and it
// works with the HDFS delegation token of a Kerberized cluster, which has no DataNode write path here.

// frameworkStateXAttr is the extended attribute that holds it (user.yarn-am.framework-state).
const frameworkStateXAttr = "yarn-am.framework-state"

// xattrFrameworkState is a framework.StateStore in frameworkStateXAttr.
type xattrFrameworkState struct {
	nn  *yarnrpc.NameNodeClient
	dir string
}

// frameworkStateOf is the framework's store in the staging directory; nil without one (or without
// its NameNode connection).
func frameworkStateOf(s stagingStore) framework.StateStore {
	switch st := s.(type) {
	case *staging:
		if st != nil && st.nn != nil {
			return xattrFrameworkState{st.nn, st.dir.Path}
		}
	case *tokenStaging:
		if st != nil {
			return xattrFrameworkState{st.nn, st.dir.Path}
		}
	}
	return nil
}

// Load reads the state back; nil, nil when none was saved.
func (x xattrFrameworkState) Load(ctx context.Context) ([]byte, error) {
	data, err := x.nn.GetXAttr(ctx, x.dir, frameworkStateXAttr)
	switch {
	case errors.Is(err, yarnrpc.ErrNoXAttr):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the framework's state (user.%s of %s): %w", frameworkStateXAttr, x.dir, err)
	case len(data) > framework.MaxState:
		return nil, fmt.Errorf("the framework's state (user.%s of %s) is %d bytes; at most %d are read", frameworkStateXAttr, x.dir, len(data), framework.MaxState)
	}
	return data, nil
}

// Save replaces the state.
func (x xattrFrameworkState) Save(ctx context.Context, data []byte) error {
	if len(data) > framework.MaxState {
		return fmt.Errorf("the framework's state is %d bytes; at most %d", len(data), framework.MaxState)
	}
	return x.nn.SetXAttr(ctx, x.dir, frameworkStateXAttr, data)
}
