package am

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/internal/proc"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/resources"
)

// MaxLaunchWorkers bounds --launch-workers: each worker holds a connection to a NodeManager.
const MaxLaunchWorkers = 1024

// ProcessFlags are the command line of `yarn-am am` as cmd/yarn-am parses it; Check and Options turn
// them into ProcessOptions.
type ProcessFlags struct {
	JobFile, ResourceConf, Driver             string
	Defines                                   []string // submit's (contract.EnvDefines), then the command line's
	Service                                   bool
	HeartbeatFast, HeartbeatSlow              time.Duration
	LaunchWorkers, FinishedHistory            int
	MaxEventStreams, MaxEventStreamsPerClient int
	Policy                                    jobfile.PolicyFlags
}

// Check refuses flags that are bad usage (exit 2), before the job file is read; args are the
// arguments after the flags (am takes none).
func (f *ProcessFlags) Check(args []string) error {
	switch {
	case f.JobFile == "":
		return errors.New("--job is required (the staged job.toml)")
	case len(args) > 0:
		return fmt.Errorf("unexpected argument %q; am takes flags only", args[0])
	case f.HeartbeatFast <= 0 || f.HeartbeatSlow <= 0:
		return fmt.Errorf("--heartbeat-fast=%v --heartbeat-slow=%v: both must be positive durations like 200ms or 1s", f.HeartbeatFast, f.HeartbeatSlow)
	case f.FinishedHistory < 1:
		return fmt.Errorf("--finished-history=%d: must be at least 1 (the default is %d)", f.FinishedHistory, DefaultFinishedHistory)
	case f.MaxEventStreams < 1 || f.MaxEventStreamsPerClient < 1 || f.MaxEventStreamsPerClient > f.MaxEventStreams:
		return fmt.Errorf("--max-event-streams=%d --max-event-streams-per-client=%d: both must be at least 1, the per-client one at most the total (defaults %d and %d)",
			f.MaxEventStreams, f.MaxEventStreamsPerClient, web.DefaultMaxEventStreams, web.DefaultMaxEventStreamsPerClient)
	case f.Service && f.Driver != "":
		return errors.New("--service and --driver exclude each other (the driver decides when the application ends)")
	case f.LaunchWorkers < 1 || f.LaunchWorkers > MaxLaunchWorkers:
		return fmt.Errorf("--launch-workers=%d: must be from 1 to %d (the default is %d)", f.LaunchWorkers, MaxLaunchWorkers, DefaultLaunchWorkers)
	}
	// A bad policy flag is bad usage too, checked before the job file: Apply checks only the flags.
	return f.Policy.Apply(new(jobfile.Policy))
}

// Options reads the staged job file once: its [policy] table gives the policy (the flags win), and
// RunProcess reads the rest of it. A job that does not validate is invalid input (exit 3), not a
// failure of the AM: the same checks RunProcess makes, before it registers (cmd/yarn-am's
// TestBadInputs, "am a bad job"). -D job keys replace the staged file's, as they replaced the file's
// at submit (docs/job-file.md#-d-overrides); the launchers get the external-resource ones.
func (f *ProcessFlags) Options() (ProcessOptions, error) {
	job, err := jobfile.Read(f.JobFile)
	if err != nil {
		return ProcessOptions{}, err
	}
	defines, derr := job.ApplyDefines(f.Defines)
	_, jerr := job.StagedJob()
	_, _, rerr := resources.Load(resources.Sources{Job: job.ResourceKeys(), ResourceConf: f.ResourceConf, Overrides: defines})
	if err := errors.Join(derr, jerr, rerr); err != nil {
		return ProcessOptions{}, err
	}
	policy, err := job.Policy()
	if err == nil {
		err = f.Policy.Apply(&policy)
	}
	if err != nil {
		return ProcessOptions{}, err
	}
	return ProcessOptions{Job: job, ResourceConf: f.ResourceConf, Defines: defines, Service: f.Service, Driver: f.Driver,
		HeartbeatFast: f.HeartbeatFast, HeartbeatSlow: f.HeartbeatSlow, LaunchWorkers: f.LaunchWorkers, FinishedHistory: f.FinishedHistory,
		Policy: decision.PolicyConfig(policy), MaxEventStreams: f.MaxEventStreams, MaxEventStreamsPerClient: f.MaxEventStreamsPerClient}, nil
}

// LogPeakRSS logs the AM process's peak resident set size (VmHWM), for sizing am.memory.
func LogPeakRSS() {
	v, ok, err := proc.StatusField(proc.Self, "VmHWM")
	if err != nil || !ok {
		return
	}
	if f := strings.Fields(v); len(f) >= 1 {
		if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
			logrus.Infof("am peak RSS: %.1f MiB", kb/1024)
		}
	}
}
