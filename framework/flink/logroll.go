package flink

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/rollingfile"
	"github.com/yarn-am/yarn-am/jobfile"
)

// A long-running job's logs stay within a bound on the NodeManagers' disks
// (docs/flink.md#logs-that-roll): the JobManager's and TaskManagers' log4j files roll by size with a
// count kept (flinkdist.LogRoll), and so do the JVMs' stdout and stderr, which flink-jobmanager and
// flink-taskmanager copy into <role>.out and <role>.err (internal/rollingfile). The rolled parts,
// <file>.<n>, are what YARN's rolling log aggregation uploads while the job runs (rolledLogsPattern).

// The [flink] keys of the roll.
const (
	keyLogMaxSize  = "log-max-size"
	keyLogMaxFiles = "log-max-files"
)

// maxLogSize bounds log-max-size: a larger part is no longer a bound a NodeManager's disk notices.
const maxLogSize = 1 << 40

// maxLogFiles bounds log-max-files.
const maxLogFiles = 1000

// rolledLogsPattern is the rolled-logs include pattern of a [flink] job's log aggregation
// (jobfile.TableInfo.RolledLogs): the rolled parts of the JobManager's and TaskManagers' log, stdout
// and stderr files, never the files being written, which the NodeManager deletes once uploaded.
const rolledLogsPattern = `^(jobmanager|taskmanager)\.(log|out|err)\.[0-9]+$`

// readLogRoll reads log-max-size and log-max-files into f.Logs.
func readLogRoll(t *jobfile.Table, f *flinkSpec) {
	f.Logs = flinkdist.LogRoll{MaxSize: flinkdist.DefaultLogMaxSize, MaxFiles: flinkdist.DefaultLogMaxFiles}
	if v, set := t.Value(keyLogMaxSize); set {
		f.Logs.Set = true
		s, ok := v.(string)
		n, err := parseLogSize(s)
		switch {
		case !ok:
			t.Problem("flink.%s = %s: want a size with a unit, such as \"64 MiB\" or \"512 KiB\", not %s", keyLogMaxSize, jobfile.Show(v), jobfile.TypeName(v))
		case err != nil:
			t.Problem("flink.%s = %q: %v", keyLogMaxSize, bounded(s), err)
		default:
			f.Logs.MaxSize = n
		}
	}
	if v, set := t.Int(keyLogMaxFiles, rollingfile.MinFiles, maxLogFiles, " (the files kept of each log: the one written and its rolled parts)"); set {
		f.Logs.Set = true
		f.Logs.MaxFiles = int(v)
	} else if t.Has(keyLogMaxFiles) {
		f.Logs.Set = true
	}
}

// parseLogSize reads a size with a binary unit: KiB, MiB, GiB or TiB (also k, m, g, t, with an
// optional b, any case), from 64 KiB (rollingfile.MinSize) to 1 TiB.
func parseLogSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("want a number with a unit KiB, MiB, GiB or TiB, such as \"64 MiB\"")
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i")
	shift := map[string]uint{"k": 10, "m": 20, "g": 30, "t": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("unit %q: want KiB, MiB, GiB or TiB (binary units; also k, m, g, t), such as \"64 MiB\"", bounded(strings.TrimSpace(t[i:])))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number; want a size such as \"64 MiB\"", bounded(num))
	}
	b := v * float64(uint64(1)<<sh)
	switch {
	case b < rollingfile.MinSize:
		return 0, fmt.Errorf("below the smallest size, 64 KiB: a smaller part would split a JVM's long lines (its classpath) over files")
	case b > maxLogSize:
		return 0, fmt.Errorf("above the largest size, 1 TiB")
	}
	return int64(b), nil
}

// openOutputs opens the rolling <name>.out and <name>.err in logDir, the JVM's stdout and stderr,
// each rolled and counted as the log4j file is.
func openOutputs(logDir, name string, roll flinkdist.LogRoll) (out, errOut *rollingfile.File, err error) {
	if roll.MaxSize == 0 {
		roll.MaxSize, roll.MaxFiles = flinkdist.DefaultLogMaxSize, flinkdist.DefaultLogMaxFiles
	}
	if out, err = rollingfile.Open(filepath.Join(logDir, name+".out"), roll.MaxSize, roll.MaxFiles); err != nil {
		return nil, nil, err
	}
	if errOut, err = rollingfile.Open(filepath.Join(logDir, name+".err"), roll.MaxSize, roll.MaxFiles); err != nil {
		out.Close()
		return nil, nil, err
	}
	return out, errOut, nil
}

// checkHomeLog4j refuses the roll keys with a home on this machine whose own conf/log4j.properties
// would be used instead of yarn-am's rolling configuration (flinkdist.WriteConfDir refuses it in the
// container, for a provided home).
func checkHomeLog4j(t *jobfile.Table, f *flinkSpec) {
	if !f.Logs.Set || f.Home == "" || t.Staged() {
		return
	}
	p := filepath.Join(f.Home, "conf", "log4j.properties")
	if _, err := os.Stat(p); err == nil {
		t.Problem("flink.%s and flink.%s set how yarn-am's log4j configuration rolls, but the Flink home has its own %s, which would be used instead: remove the keys, or remove that file from the home", keyLogMaxSize, keyLogMaxFiles, bounded(p))
	}
}
