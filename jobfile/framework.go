package jobfile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// This file is the job file's side of the framework seam (docs/design.md#adding-a-framework): a
// framework that runs a workload on yarn-am (Flink, ...) owns one top-level table of the job file
// ([flink]), registered here by the framework package. The job file knows nothing of what the table
// means: it hands the table to the framework's TableReader, in the same pass and with the same
// line-numbered problems as its own keys, and keeps what the reader returns in Job.Framework.

// TableReader reads a framework's table of the job file.
type TableReader interface {
	// ReadTable reads t into the framework's own spec, reporting problems with t.Problem; it may
	// adjust the job's defaults through j (the AM's memory, the TaskExecutors' environment). The
	// value is kept as Job.Framework.Spec.
	ReadTable(t *Table, j *Job) any
}

// TableInfo registers a framework's table.
type TableInfo struct {
	// Name is the table's name ([flink]: "flink") and the framework's.
	Name string
	// Reader reads the table.
	Reader TableReader
	// DefinesTo is the sub-table a -D key that is not a job key goes to in a job with this table
	// ("config": -D k=v is [flink.config] k = v; docs/job-file.md#-d-overrides), also reachable as
	// -D <name>.<DefinesTo>.<key>=v; "" = the framework takes no -D keys.
	DefinesTo string
	// KeyNoun and DefineExample word the -D messages: "Flink key", "taskmanager.numberOfTaskSlots=2".
	KeyNoun, DefineExample, DefinesDoc string
	// Command is the TaskExecutors' command in a job with this table (the framework runs its own
	// workers; taskexecutor.command is then refused); "" = the job gives it. Workers names them in
	// that message ("Flink TaskManagers").
	Command, Workers string
	// MinInstances, when set, says what taskexecutor.min-instances means in a job with this table
	// without a gang ("the fewest TaskManagers [flink] taskmanagers = \"demand\" keeps"): the
	// framework reads it (TaskExecutorSpec.MinInstancesSet) and refuses it where it means nothing.
	// "" = min-instances needs gang = true.
	MinInstances string
	// RolledLogs is the rolled-logs include pattern of a job with this table when its
	// [log-aggregation] gives none: the framework's rolled log files, which YARN's rolling log
	// aggregation uploads while the job runs (docs/job-file.md#log-aggregation); "" = none.
	RolledLogs string
}

var (
	tablesMu sync.RWMutex
	tables   = map[string]TableInfo{}
)

// RegisterTable registers a framework's table; the framework package calls it for each framework
// (framework.Register). A second registration of one name replaces the first.
func RegisterTable(info TableInfo) {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	tables[info.Name] = info
}

// registeredTables returns the registered tables by name.
func registeredTables() map[string]TableInfo {
	tablesMu.RLock()
	defer tablesMu.RUnlock()
	return maps.Clone(tables)
}

// frameworkIn returns the registered framework table the document has, if any.
func frameworkIn(doc map[string]any) (TableInfo, bool) {
	ts := registeredTables()
	for _, name := range slices.Sorted(maps.Keys(ts)) {
		if _, ok := doc[name]; ok {
			return ts[name], true
		}
	}
	return TableInfo{}, false
}

// FrameworkPart is a job's framework table as its framework read it.
type FrameworkPart struct {
	Name string // the table's name, the framework's
	Spec any    // what the framework's TableReader returned
	// Defines are the -D keys given to the framework (key=value, in order; already in the table's
	// DefinesTo sub-table): the layer over the job file's that the AM hands to the framework's
	// processes, whose staged job.toml lacks them.
	Defines []string
}

// Table is a framework's table of the job file as its TableReader sees it: typed reads whose
// problems carry the job file's line numbers, like the job's own keys.
type Table struct {
	r      reader
	name   string
	m      map[string]any
	doc    map[string]any
	amT    map[string]any
	dir    string
	staged bool
	// defines are the -D keys given to the framework (FrameworkPart.Defines), already in the table.
	defines []string
}

// Defined returns the value the last -D gave a key of the table's DefinesTo sub-table, and whether
// one did: a message about that key then names -D, not the job file.
func (t *Table) Defined(key string) (string, bool) {
	for i := len(t.defines) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(t.defines[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

// Dir is the job file's directory, against which relative paths are made absolute.
func (t *Table) Dir() string { return t.dir }

// Staged reports whether the job is read in a container (the staged job.toml), where local paths of
// the client no longer exist.
func (t *Table) Staged() bool { return t.staged }

// Problem reports a problem of the table (printf-style; long values are cut).
func (t *Table) Problem(format string, args ...any) { t.r.add(format, args...) }

// Has reports whether the table sets key.
func (t *Table) Has(key string) bool { _, ok := t.m[key]; return ok }

// String reads a string key; set false when the key is absent (a value of another type is a problem).
func (t *Table) String(key string) (v string, set bool) { return t.r.str(t.m, key, t.name+"."+key) }

// Value returns a key's value as the TOML decoder gave it, for a key that takes more than one type.
func (t *Table) Value(key string) (any, bool) { v, ok := t.m[key]; return v, ok }

// Bool reads a boolean key; set false when the key is absent (a value of another type is a problem).
func (t *Table) Bool(key string) (v bool, set bool) { return t.r.boolean(t.m, key, t.name+"."+key) }

// Int reads an integer key within [lo, hi]; set false when the key is absent or wrong (a value of
// another type or out of range is a problem naming the range and note).
func (t *Table) Int(key string, lo, hi int64, note string) (v int64, set bool) {
	return t.r.integer(t.m, key, t.name+"."+key, lo, hi, note)
}

// Duration reads a duration key written as Go writes one ("90s", "5m", "1h30m") of at least least;
// set false when the key is absent or wrong (the problem names the key, the value and examples).
func (t *Table) Duration(key string, least time.Duration, examples string) (v time.Duration, set bool) {
	full := t.name + "." + key
	s, ok := t.r.str(t.m, key, full)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		t.Problem("%s = %q: not a duration; use a number with a unit, e.g. %s", full, bounded(s), examples)
	case d < least:
		t.Problem("%s = %q: must be at least %s", full, bounded(s), least)
	default:
		return d, true
	}
	return 0, false
}

// Strings reads a list of strings.
func (t *Table) Strings(key string) []string { return t.r.strings(t.m, key, t.name+"."+key) }

// Sub reads a sub-table (nil when absent; a value of another type is a problem).
func (t *Table) Sub(key string) map[string]any { return t.r.table(t.m, key, t.name+"."+key) }

// OnlyKeys reports every key of the table that is not in valid, with a did-you-mean.
func (t *Table) OnlyKeys(valid []string) {
	full := make([]string, len(valid))
	for i, k := range valid {
		full[i] = t.name + "." + k
	}
	for _, k := range slices.Sorted(maps.Keys(t.m)) {
		if !slices.Contains(valid, k) {
			t.Problem("unknown key %q%s; valid keys of [%s] are %s", t.name+"."+k, didYouMean(t.name+"."+k, full), t.name, strings.Join(valid, ", "))
		}
	}
}

// TopLevel returns the job file's top-level keys whose names start with prefix, with their values
// (the external-resource keys a framework passes on to its processes).
func (t *Table) TopLevel(prefix string) map[string]any {
	out := map[string]any{}
	for k, v := range t.doc {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

// AMMemorySet reports whether the job file sets am.memory (a framework may give another default).
func (t *Table) AMMemorySet() bool { _, ok := t.amT["memory"]; return ok }

// readFramework reads the document's framework table, if any, through its registered reader.
func (r reader) readFramework(doc, amT map[string]any, j *Job, dir string, staged bool, defines []string) {
	info, ok := frameworkIn(doc)
	if !ok {
		return
	}
	t := &Table{r: r, name: info.Name, m: r.table(doc, info.Name, info.Name), doc: doc, amT: amT, dir: dir, staged: staged, defines: defines}
	j.Framework = &FrameworkPart{Name: info.Name, Spec: info.Reader.ReadTable(t, j), Defines: slices.Clone(defines)}
}

// AbsAgainst makes p absolute against dir (a path of the job file, relative to it).
func AbsAgainst(dir, p string) string { return absAgainst(dir, p) }

// Bounded cuts a value shown in a message (the job file's own bound).
func Bounded(s string) string { return bounded(s) }

// frameworkNames lists the registered tables, for the valid top-level keys.
func frameworkNames() []string { return slices.Sorted(maps.Keys(registeredTables())) }

// validTopKeys words the valid top-level keys, the registered frameworks' tables among them.
func validTopKeys() string {
	var b strings.Builder
	b.WriteString("valid top-level keys are name, queue, tags, priority, max-attempts, keep-containers, flink-conf, hdfs-namenodes, [am], [taskexecutor], [policy]")
	for _, n := range frameworkNames() {
		fmt.Fprintf(&b, ", [%s]", n)
	}
	b.WriteString(", and the external-resource keys")
	return b.String()
}

// HasArchiveSuffix reports whether p names an archive YARN unpacks (.tar.gz, .tgz, .tar, .zip, .jar).
func HasArchiveSuffix(p string) bool { return hasArchiveSuffix(p) }

// ArchiveSuffixes lists the archive suffixes YARN unpacks, in the order messages name them.
func ArchiveSuffixes() []string { return slices.Clone(archiveSuffixes) }

// Show renders a job-file value for a message; TypeName names its TOML type.
func Show(v any) string { return show(v) }

// TypeName names a job-file value's TOML type for a message.
func TypeName(v any) string { return typeName(v) }
