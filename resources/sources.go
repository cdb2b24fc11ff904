package resources

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/yarn-am/yarn-am/internal/flinkconf"
	"github.com/yarn-am/yarn-am/internal/text"
)

// Sources names where the external-resource configuration comes from. Precedence, lowest first:
// ResourceConf (the flink-conf file) < Job < Overrides (a later -D wins over an earlier one).
type Sources struct {
	// Job are the external-resource keys of a job.toml (optional), read from it by the job-file reader
	// (jobfile, File.ResourceKeys), which decodes the file once for all its readers.
	Job *JobKeys
	// ResourceConf is a flink-conf.yaml (flat "key: value") or a Flink 1.19+ config.yaml (nested YAML),
	// optional. A job file may name one too (JobKeys.ResourceConf); this field wins over that.
	ResourceConf string
	// Overrides are -D key=value flags, in the order given. A key that is not an external-resource key
	// is an error (with a did-you-mean): -D sets nothing else, and dropping it would lose what the user
	// asked for.
	Overrides []string
}

// JobKeys are the external-resource keys of one job file: external-resources, external-resource.*
// and the draft external-resource.list, flattened to dotted keys (a TOML table, dotted key or quoted
// key give the same key), each with the file and line it is written on.
type JobKeys struct {
	Path   string // the job file, for messages
	Values map[string]Value
	// ResourceConf is the flink-conf.yaml the job names (flink-conf = "..."), made absolute against the
	// job file's directory; "" = none.
	ResourceConf string
	// Problems are what could not be read: the file itself, a key set twice, a value of the wrong
	// type. Load reports them with the rest.
	Problems []Problem
}

// Load reads the sources, merges them by precedence and validates the result like Parse. Only
// external-resource keys are read: other keys of the Flink YAML (a Flink configuration has many) are
// ignored, and a job file's come already picked out (JobKeys). A duplicate key inside one file is an
// error naming both lines. Draft spellings are resolved per source, so a
// higher-precedence source may override either spelling. The error, if any, is a *ConfigError listing
// every problem, unreadable files included.
func Load(src Sources) (*Config, []Warning, error) {
	var (
		layers []map[string]Value
		warns  []Warning
		probs  []Problem
	)
	flinkConf := src.ResourceConf
	var jobKV map[string]Value
	if src.Job != nil {
		probs = append(probs, src.Job.Problems...)
		jobKV = src.Job.Values
		if flinkConf == "" {
			flinkConf = src.Job.ResourceConf
		}
	}
	if flinkConf != "" {
		kv, w, p := readFlinkConf(flinkConf)
		warns = append(warns, w...)
		probs = append(probs, p...)
		layers = append(layers, kv)
	}
	if jobKV != nil {
		layers = append(layers, jobKV)
	}
	if len(src.Overrides) > 0 {
		kv, p := readOverrides(src.Overrides)
		probs = append(probs, p...)
		layers = append(layers, kv)
	}

	merged := map[string]Value{}
	for _, layer := range layers {
		norm, w, p := normalize(layer)
		warns = append(warns, w...)
		probs = append(probs, p...)
		for k, v := range norm {
			merged[k] = v
		}
	}
	cfg, w, p := validate(merged)
	warns = append(warns, w...)
	probs = append(probs, p...)
	if len(probs) > 0 {
		return nil, warns, &ConfigError{Problems: probs}
	}
	return cfg, warns, nil
}

// IsResourceKey reports whether a key belongs to the external-resource configuration (the keys Load
// reads from every source).
func IsResourceKey(k string) bool { return strings.HasPrefix(k, "external-resource") }

func readProblem(kind, path string, err error) Problem {
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Problem{Key: kind, Value: path, Message: fmt.Sprintf("%s %q does not exist", kind, path)}
	case !errors.As(err, &pe):
		return Problem{Key: kind, Value: path, Message: err.Error()} // ReadFile's own: it names the file
	}
	return Problem{Key: kind, Value: path, Message: fmt.Sprintf("%s %q cannot be read: %v", kind, path, err)}
}

// Duplicate is the problem of a key set twice in one file, naming both lines in file order.
func Duplicate(key, file string, line1, line2 int, v1, v2 string) Problem {
	return Problem{Key: key, Value: v2, Origin: fmt.Sprintf("%s:%d", file, line2),
		Message: fmt.Sprintf("%s is set twice in %s: line %d (%q) and line %d (%q); keep one", text.BoundArgs([]any{key, file, line1, v1, line2, v2})...)}
}

// --- -D flags ---

func readOverrides(flags []string) (map[string]Value, []Problem) {
	kv := map[string]Value{}
	var probs []Problem
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !IsResourceKey(k) {
			probs = append(probs, Problem{Key: k, Value: f, Origin: "-D",
				Message: fmt.Sprintf("-D %s: not an external-resource key%s; -D sets only %s and %s<name>.* keys (docs/job-file.md)",
					text.BoundArgs([]any{k, overrideSuggestion(k), KeyResources, KeyPrefix})...)})
			continue
		}
		if !ok {
			probs = append(probs, Problem{Key: k, Value: f, Origin: "-D",
				Message: fmt.Sprintf("-D %q: not key=value; write -D %s=<value>", text.BoundArgs([]any{f, k})...)})
			continue
		}
		kv[k] = Value{V: strings.TrimSpace(v), Origin: "-D"}
	}
	return kv, probs
}

// overrideSuggestion proposes the external-resource key a -D key outside the prefix was probably meant
// to be: a typo in the prefix (extrenal-resource.gpu.amount) keeps the rest of the key.
func overrideSuggestion(k string) string {
	cands := []string{KeyResources, KeyDraftList}
	if _, rest, ok := strings.Cut(k, "."); ok {
		cands = append(cands, KeyPrefix+rest)
	}
	return text.DidYouMean(k, cands)
}

// --- flink-conf.yaml / config.yaml ---

// FlinkYAMLName is the file name Flink 1.19+ reads as standard (nested) YAML; any other flink-conf is
// read line by line as "key: value", as Flink reads flink-conf.yaml (internal/flinkconf).
const FlinkYAMLName = flinkconf.YAMLName

// readFlinkConf reads the external-resource keys of a Flink configuration through the one reader every
// Flink configuration goes through (internal/flinkconf), so a file this accepts is what the Flink
// processes are started with. Its problems (a line it cannot read, a key set twice) become Problems; the
// keys of a legacy file that could be read are still checked, so every problem is reported at once.
func readFlinkConf(path string) (map[string]Value, []Warning, []Problem) {
	entries, err := flinkconf.ReadFile(path)
	var probs []Problem
	for _, e := range flinkconf.Problems(err) {
		var le *flinkconf.LineError
		var de *flinkconf.DuplicateError
		switch {
		case errors.As(e, &de):
			probs = append(probs, Duplicate(de.Key, path, de.Line1, de.Line2, de.Value1, de.Value2))
		case errors.As(e, &le) && le.Line > 0:
			probs = append(probs, Problem{Key: "flink-conf file", Value: le.Text, Origin: fmt.Sprintf("%s:%d", path, le.Line), Message: le.Error()})
		case errors.As(e, &le):
			probs = append(probs, Problem{Key: "flink-conf file", Value: path, Origin: path, Message: le.Error()})
		default:
			probs = append(probs, readProblem("flink-conf file", path, e))
		}
	}
	kv := map[string]Value{}
	for _, e := range entries {
		if !IsResourceKey(e.Key) {
			// Flink's keys are Flink's business, but a near miss of ours would drop a resource
			// without a word; refused like the same typo in -D (docs/job-file.md#external-resources).
			if want, near := NearResourceKey(e.Key); near {
				probs = append(probs, Problem{Key: e.Key, Value: e.Value, Origin: fmt.Sprintf("%s:%d", path, e.Line),
					Message: fmt.Sprintf("%s:%d: %s is not an external-resource key (did you mean %q?); fix the spelling, or the resource is not configured",
						text.BoundArgs([]any{path, e.Line, e.Key, want})...)})
			}
			continue
		}
		kv[e.Key] = Value{V: e.Value, Origin: fmt.Sprintf("%s:%d", path, e.Line)}
	}
	return kv, nil, probs
}

// NearResourceKey reports whether key is a near miss of an external-resource key: its first dotted part
// is within two edits of external-resource or external-resources (or differs only in case), e.g.
// extrenal-resource.gpu.param.vendor. want is the key spelt right.
func NearResourceKey(key string) (want string, near bool) {
	first, rest, dotted := strings.Cut(key, ".")
	for _, good := range []string{KeyResources, strings.TrimSuffix(KeyPrefix, ".")} {
		if first == good {
			return "", false
		}
	}
	// The nearest within two edits, the first on a tie. text.Within, not EditDistance: first is the
	// user's and may be a megabyte long, which EditDistance would pay for in full (TestMessagesAreBounded).
	best, lower := "", strings.ToLower(first)
	for d := 0; d <= 2 && best == ""; d++ {
		for _, good := range []string{KeyResources, strings.TrimSuffix(KeyPrefix, ".")} {
			if text.Within(lower, good, d) {
				best = good
				break
			}
		}
	}
	if best == "" {
		return "", false
	}
	if best == KeyResources && dotted {
		best = strings.TrimSuffix(KeyPrefix, ".") // external-resources.gpu.amount: the per-resource prefix
	}
	if dotted {
		return best + "." + rest, true
	}
	return best, true
}
