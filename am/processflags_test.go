package am

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/am/web"
)

// TestProcessFlagsCheckNamesTheFlag: each bad `yarn-am am` flag is refused naming it and what would
// be valid, before the job file is read (cmd/yarn-am's TestBadInputs runs them through the binary).
func TestProcessFlagsCheckNamesTheFlag(t *testing.T) {
	good := func() ProcessFlags {
		return ProcessFlags{JobFile: "job.toml", HeartbeatFast: DefaultHeartbeatFast, HeartbeatSlow: DefaultHeartbeatSlow,
			LaunchWorkers: DefaultLaunchWorkers, FinishedHistory: DefaultFinishedHistory,
			MaxEventStreams: web.DefaultMaxEventStreams, MaxEventStreamsPerClient: web.DefaultMaxEventStreamsPerClient}
	}
	f := good()
	assert.NoError(t, f.Check(nil))
	for want, change := range map[string]func(*ProcessFlags){
		"--job is required":                             func(f *ProcessFlags) { f.JobFile = "" },
		"--heartbeat-fast=0s":                           func(f *ProcessFlags) { f.HeartbeatFast = 0 },
		"--finished-history=0: must be at least 1":      func(f *ProcessFlags) { f.FinishedHistory = 0 },
		"the per-client one at most the total":          func(f *ProcessFlags) { f.MaxEventStreamsPerClient = f.MaxEventStreams + 1 },
		"--service and --driver exclude each other":     func(f *ProcessFlags) { f.Service, f.Driver = true, "./d" },
		"--launch-workers=1025: must be from 1 to 1024": func(f *ProcessFlags) { f.LaunchWorkers = MaxLaunchWorkers + 1 },
	} {
		f := good()
		change(&f)
		assert.ErrorContains(t, f.Check(nil), want)
	}
	f = good()
	assert.ErrorContains(t, f.Check([]string{"extra"}), `unexpected argument "extra"; am takes flags only`)
}
