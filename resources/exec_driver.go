package resources

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/internal/text"
)

// ExecDriverName is the name the exec driver is registered under.
const ExecDriverName = "exec"

// Exec driver parameters (external-resource.<name>.param.<p>).
const (
	ExecParamPath    = "path"    // required: the program
	ExecParamArgs    = "args"    // optional: extra arguments, split as a shell would
	ExecParamTimeout = "timeout" // optional: Go duration ("90s") or seconds ("90"); default 60s
)

func init() {
	// Only a second registration of the same name can fail; this is the only place "exec" is registered.
	_ = RegisterDriver(ExecDriverName, newExecDriver)
}

// ExecDriver runs any program with the discovery-script contract (`path amount [args...]`, first line
// of stdout = comma-separated ids) and returns one info {"index": id} per id. It covers FPGAs and any
// device no built-in driver knows. Ids must follow ExecIDRule: distinct, 1 to 256 characters from
// A-Z a-z 0-9 _ . : / - (enough for indexes, PCI addresses and device paths, and safe in an environment
// variable or a file name); anything else fails discovery with the program's output quoted.
type ExecDriver struct {
	Resource string
	Path     string
	Args     string
	Timeout  time.Duration
}

func newExecDriver(resource string, params map[string]string) (Driver, error) {
	var probs []string
	prefix := "external-resource." + resource + ".param."
	d := &ExecDriver{Resource: resource, Timeout: DefaultDiscoveryTimeout}
	for k, v := range params {
		switch k {
		case ExecParamPath:
			d.Path = strings.TrimSpace(v)
		case ExecParamArgs:
			if _, err := SplitArgs(v); err != nil {
				probs = append(probs, fmt.Sprintf("%s%s = %q: %s; quote arguments as in a shell", prefix, k, v, strings.TrimPrefix(err.Error(), "resources: ")))
			}
			d.Args = v
		case ExecParamTimeout:
			t, err := ParseTimeout(v)
			if err != nil {
				probs = append(probs, fmt.Sprintf("%s%s = %q: %v", prefix, k, v, err))
			}
			d.Timeout = t
		default:
			probs = append(probs, fmt.Sprintf("%s%s = %q: unknown parameter of the exec driver%s; valid: path, args, timeout",
				prefix, k, v, text.DidYouMean(k, []string{ExecParamPath, ExecParamArgs, ExecParamTimeout})))
		}
	}
	if d.Path == "" {
		probs = append(probs, fmt.Sprintf("%spath is not set: the exec driver needs the program to run, e.g. %spath = /opt/fpga/bin/list-fpgas", prefix, prefix))
	}
	if len(probs) > 0 {
		sort.Strings(probs)
		return nil, fmt.Errorf("%s", strings.Join(probs, "; "))
	}
	return d, nil
}

// Discover runs the program and returns amount infos {"index": id}. What a successful program printed
// on stderr, and a child of it the runner had to kill, are logged as warnings.
func (d *ExecDriver) Discover(ctx context.Context, amount int) ([]Info, error) {
	res, err := RunDiscoveryResult(ctx, d.Path, amount, d.Args, d.Timeout, ExecIDRule)
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", d.Resource, err)
	}
	for _, n := range res.Notes {
		logrus.WithFields(logrus.Fields{"resource": d.Resource, "program": d.Path}).Warn("exec driver: discovery program: " + n)
	}
	infos := make([]Info, len(res.IDs))
	for i, id := range res.IDs {
		infos[i] = Info{MainProperty: id}
	}
	return infos, nil
}

// ParseTimeout reads a discovery timeout: a Go duration ("90s", "2m") or a plain number of seconds
// ("90"). It must be positive.
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var t time.Duration
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > int64(24*time.Hour/time.Second) {
			return 0, fmt.Errorf("timeout too long: at most 86400 seconds")
		}
		t = time.Duration(n) * time.Second
	} else if d, err := time.ParseDuration(s); err == nil {
		t = d
	} else {
		return 0, fmt.Errorf("not a duration: use a Go duration such as 90s or 2m, or a number of seconds")
	}
	if t <= 0 {
		return 0, fmt.Errorf("timeout must be positive, e.g. 60s")
	}
	return t, nil
}
