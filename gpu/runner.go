package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/proc"
	"github.com/yarn-am/yarn-am/internal/startfail"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/resources"
)

// ScriptRunner is the driver's seam to the outside world: everything the driver executes goes through
// it, so unit tests replace it with a fake.
type ScriptRunner interface {
	// Discover runs `<path> <amount> <args...>` with the discovery-script contract (## Contracts in
	// docs/design.md) and returns what it found (at least amount indexes), or an error carrying the
	// script's stderr.
	Discover(ctx context.Context, path string, amount int, args string, timeout time.Duration) (Found, error)
	// Release runs `<path> 0 <args...> --release`, the release mode of the built-in scripts.
	Release(ctx context.Context, path string, args []string, timeout time.Duration) error
	// MarkSick runs `<path> 0 <args...> --mark-sick <uuid>`: the built-in scripts record the GPU as
	// sick in the coordination directory, and keep it out of claims until it reads healthy.
	MarkSick(ctx context.Context, path string, args []string, uuid string, timeout time.Duration) error
}

// Found is what a discovery script delivered.
type Found struct {
	// Indexes are the ids of the first stdout line, all of them (the driver takes the first amount).
	Indexes []string
	// UUIDLine is the value of the "uuids=" line after the first, if the script printed one ("" if
	// not): the UUIDs of Indexes, in order, comma-separated, empty where unknown.
	UUIDLine string
	HasUUIDs bool
	// TopologyLine is the value of the "topology=" line, if the script printed one: the GPU topology it
	// read and the link of the set it chose (TopologyLinePrefix).
	TopologyLine string
	// Notes are the script's warnings (its stderr) and the runner's (a child killed): the driver logs them.
	Notes []string
}

// UUIDLinePrefix starts the optional second stdout line of a discovery script that lists the UUIDs of
// the GPUs of the first line (docs/gpus.md#discovery-script-contract).
const UUIDLinePrefix = "uuids="

// ExecRunner runs scripts as child processes of this process, which is the owner of their coordination
// claims (the scripts record their caller, $PPID). Discovery goes through resources.RunDiscoveryResult,
// the runner the exec driver uses too (bounded output, process-group kill, children that hold the
// output killed).
type ExecRunner struct{}

// Discover implements ScriptRunner with resources.RunDiscoveryResult and IndexRule: output that is not
// distinct non-negative integers fails discovery with the output quoted.
func (ExecRunner) Discover(ctx context.Context, path string, amount int, args string, timeout time.Duration) (Found, error) {
	res, err := resources.RunDiscoveryResult(ctx, path, amount, args, timeout, IndexRule)
	if err != nil {
		return Found{}, err
	}
	f := Found{Indexes: res.Printed, Notes: res.Notes}
	for _, l := range res.More {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), UUIDLinePrefix); ok && !f.HasUUIDs {
			f.UUIDLine, f.HasUUIDs = v, true
		} else if v, ok := strings.CutPrefix(strings.TrimSpace(l), TopologyLinePrefix); ok && f.TopologyLine == "" {
			f.TopologyLine = v
		}
	}
	return f, nil
}

// Release implements ScriptRunner: it runs the script's release mode and returns an error with its
// stderr if it fails or does not finish within timeout.
func (ExecRunner) Release(ctx context.Context, path string, args []string, timeout time.Duration) error {
	return runMode(ctx, "release", path, append(append([]string{"0"}, args...), "--release"), timeout)
}

// MarkSick implements ScriptRunner as Release does, with the script's mark-sick mode.
func (ExecRunner) MarkSick(ctx context.Context, path string, args []string, uuid string, timeout time.Duration) error {
	return runMode(ctx, "mark-sick", path, append(append([]string{"0"}, args...), "--mark-sick", uuid), timeout)
}

// runMode runs a built-in script's mode other than discovery (what: its name in errors): an error
// with its stderr if it fails or does not finish within timeout.
func runMode(ctx context.Context, what, path string, argv []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(path, argv...)
	var stderr bytes.Buffer
	// Bounded like discovery output (resources.MaxDiscoveryOutput); the script's own group is killed on
	// timeout and once it exited, so a child it left behind does not outlive the release.
	run, err := proc.RunGroup(ctx, cmd, nil, &limitWriter{w: &stderr, n: resources.MaxDiscoveryOutput}, nil)
	if run.Cancelled && ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("%s %s: no answer within %s", what, path, timeout)
	}
	if err == nil {
		err = run.Err
	}
	if se := (*startfail.Error)(nil); err != nil && errors.As(startfail.Explain(cmd.Path, err), &se) {
		// The script is there but its interpreter is not, or it has no #! line (TestReleaseStartFailureSaysWhy).
		return fmt.Errorf("%s: cannot start %s", what, se)
	}
	if err != nil {
		// The script's stderr goes to a terminal: no escape sequence of it does.
		msg := text.Sanitize(strings.TrimSpace(stderr.String()))
		if msg == "" {
			msg = "no output on stderr"
		}
		return fmt.Errorf("%s %s %s: %w: %s", what, path, strings.Join(argv, " "), err, msg)
	}
	return nil
}

// limitWriter keeps the first n bytes written to it and drops the rest.
type limitWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
