package book

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

// TestStateIsBoundedAndKeepsTheNewestEvents: a state over MaxStateBytes drops its oldest events
// first, and a state of another layout reads as none.
func TestStateIsBoundedAndKeepsTheNewestEvents(t *testing.T) {
	s := State{Version: StateVersion, Instances: 4, Infos: map[string]Infos{}}
	for i := 0; i < 2000; i++ {
		s.Events = append(s.Events, contract.Event{ID: uint64(i + 1), Type: contract.EventLaunched, Message: fmt.Sprintf("container %d launched on a node with a long name", i)})
	}
	data, err := EncodeState(s)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(data), MaxStateBytes)
	back, err := DecodeState(data)
	require.NoError(t, err)
	require.NotEmpty(t, back.Events)
	assert.EqualValues(t, 2000, back.Events[len(back.Events)-1].ID, "the newest events are kept")
	assert.Equal(t, 4, back.Instances)

	other, _ := json.Marshal(State{Version: StateVersion + 1})
	st, err := DecodeState(other)
	require.NoError(t, err)
	assert.Nil(t, st, "a state of another layout is ignored")
}
