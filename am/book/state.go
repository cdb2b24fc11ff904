package book

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
)

// This file is the encoding of the AM's durable state, what a later attempt of the AM needs of an
// earlier one (docs/design.md#faults); the AM (am/durable.go) fills it, keeps it in its stateStore
// and restores from it. It is small by construction: MaxStateBytes bounds it, dropping old events
// first, resource infos next, then the nodes' sick GPUs.

// MaxStateBytes bounds the encoded state, below HDFS's default limit on an extended attribute's size
// (dfs.namenode.fs-limits.max-xattr-size, 16 KiB).
const MaxStateBytes = 12 << 10

// ErrNoState is returned by a stateStore that holds no state yet (a first attempt).
var ErrNoState = errors.New("no saved AM state")

// State is the AM's durable state.
type State struct {
	Version   int    `json:"v"`
	Attempt   string `json:"attempt"`   // the attempt that saved it
	Instances int    `json:"instances"` // the declared requirement (PUT /api/v1/requirements)
	// Finished containers: every one the earlier attempts saw end, by outcome.
	Completed   int                  `json:"completed"`
	Succeeded   int                  `json:"succeeded"`
	Failed      int                  `json:"failed"`
	FailedExits map[int32]int        `json:"failedExits,omitempty"`
	Policy      decision.PolicyState `json:"policy"`
	Infos       map[string]Infos     `json:"infos,omitempty"` // running container id → its resource infos
	Events      []contract.Event     `json:"events,omitempty"`
	// Sick: node → the UUIDs of its GPUs that read unhealthy under the job (am/gpuhealth.go), so that
	// taskexecutor.sick-gpus-per-node counts the earlier attempts' sick GPUs too.
	Sick map[string][]string `json:"sick,omitempty"`
	// GivenBack: the GPU time given back for idleness (am/idlerelease.go) up to the save, so that the
	// final report counts what the earlier attempts gave back.
	GivenBack *GivenBack `json:"givenBack,omitempty"`
}

// GivenBack is the GPU time given back for idleness as the state keeps it: At is when Seconds were settled; the GPUs still
// given back then go on counting from At in the attempt that restores it (they were not declared
// again while no AM ran).
type GivenBack struct {
	Containers int       `json:"containers"`
	GPUs       int64     `json:"gpus"`
	Seconds    float64   `json:"seconds"`
	At         time.Time `json:"at"`
}

// Infos is the resource infos of one container, as its launcher reported them.
type Infos = map[string][]contract.Info

// StateVersion is the layout of State; a later attempt ignores a state of another version.
const StateVersion = 1

// EncodeState marshals s within MaxStateBytes, dropping the oldest events, then resource infos.
func EncodeState(s State) ([]byte, error) {
	for {
		data, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		if len(data) <= MaxStateBytes {
			return data, nil
		}
		switch {
		case len(s.Events) > 0:
			s.Events = s.Events[(len(s.Events)+1)/2:]
		case len(s.Infos) > 0:
			s.Infos = nil
		case len(s.Sick) > 0:
			s.Sick = nil // a later attempt counts the nodes' sick GPUs afresh
		default:
			return nil, fmt.Errorf("the AM's state is %d bytes even without events and infos (at most %d)", len(data), MaxStateBytes)
		}
	}
}

// DecodeState reads a state; one of another version is ignored (nil, nil).
func DecodeState(data []byte) (*State, error) {
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("the saved AM state is not readable: %w", err)
	}
	if s.Version != StateVersion {
		return nil, nil
	}
	return &s, nil
}

// StateEvents is how many of the latest events the state keeps (fewer when they do not fit).
const StateEvents = 50
