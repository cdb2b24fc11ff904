package resources

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Sources names where the external-resource configuration comes from. Precedence, lowest first:
// FlinkConf < Job < Overrides (a later -D wins over an earlier one).
type Sources struct {
	// Job are the external-resource keys of a job.toml (optional), read from it by the job-file reader
	// (container/jobfile, File.ResourceKeys), which decodes the file once for all its readers.
	Job *JobKeys
	// FlinkConf is a flink-conf.yaml (flat "key: value") or a Flink 1.19+ config.yaml (nested YAML),
	// optional. A job file may name one too (JobKeys.FlinkConf); this field wins over that.
	FlinkConf string
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
	// FlinkConf is the flink-conf.yaml the job names (flink-conf = "..."), made absolute against the
	// job file's directory; "" = none.
	FlinkConf string
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
	flinkConf := src.FlinkConf
	var jobKV map[string]Value
	if src.Job != nil {
		probs = append(probs, src.Job.Problems...)
		jobKV = src.Job.Values
		if flinkConf == "" {
			flinkConf = src.Job.FlinkConf
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
		Message: fmt.Sprintf("%s is set twice in %s: line %d (%q) and line %d (%q); keep one", BoundArgs([]any{key, file, line1, v1, line2, v2})...)}
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
					BoundArgs([]any{k, overrideSuggestion(k), KeyResources, KeyPrefix})...)})
			continue
		}
		if !ok {
			probs = append(probs, Problem{Key: k, Value: f, Origin: "-D",
				Message: fmt.Sprintf("-D %q: not key=value; write -D %s=<value>", BoundArgs([]any{f, k})...)})
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
	return didYouMean(k, cands)
}

// --- flink-conf.yaml / config.yaml ---

type yamlEntry struct {
	key  string
	val  string
	line int
}

// FlinkYAMLName is the file name Flink 1.19+ reads as standard (nested) YAML; any other flink-conf is
// read line by line as "key: value", as Flink reads flink-conf.yaml (GlobalConfiguration).
const FlinkYAMLName = "config.yaml"

var yamlLineRe = regexp.MustCompile(`^line (\d+): (.*)$`)

func readFlinkConf(path string) (map[string]Value, []Warning, []Problem) {
	data, err := ReadFile("flink-conf file", path, "a flink-conf.yaml or config.yaml", MaxFlinkConfBytes)
	if err != nil {
		return nil, nil, []Problem{readProblem("flink-conf file", path, err)}
	}
	// A UTF-8 byte order mark (an editor's) is not part of the first key; Flink's reader skips it too.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	var entries []yamlEntry
	var probs []Problem
	if filepath.Base(path) == FlinkYAMLName {
		var yerr error
		entries, yerr = yamlEntries(data)
		if yerr != nil {
			origin, msg := path, strings.TrimPrefix(yerr.Error(), "yaml: ")
			if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
				origin, msg = path+":"+m[1], yamlWords(data, m[1], m[2])
			}
			return nil, nil, []Problem{{Key: "flink-conf file", Value: path, Origin: origin,
				Message: fmt.Sprintf("%s: %s; a %s is read as YAML, as Flink 1.19+ reads it", origin, msg, FlinkYAMLName)}}
		}
	} else {
		entries, probs = legacyEntries(path, data)
	}
	kv := map[string]Value{}
	lines := map[string]yamlEntry{}
	for _, e := range entries {
		if !IsResourceKey(e.key) {
			// Flink's keys are Flink's business, but a near miss of ours would drop a resource
			// without a word; refused like the same typo in -D (docs/job-file.md#external-resources).
			if want, near := NearResourceKey(e.key); near {
				probs = append(probs, Problem{Key: e.key, Value: e.val, Origin: fmt.Sprintf("%s:%d", path, e.line),
					Message: fmt.Sprintf("%s:%d: %s is not an external-resource key (did you mean %q?); fix the spelling, or the resource is not configured",
						BoundArgs([]any{path, e.line, e.key, want})...)})
			}
			continue
		}
		if prev, dup := lines[e.key]; dup {
			probs = append(probs, Duplicate(e.key, path, prev.line, e.line, prev.val, e.val))
			continue
		}
		lines[e.key] = e
		kv[e.key] = Value{V: e.val, Origin: fmt.Sprintf("%s:%d", path, e.line)}
	}
	return kv, nil, probs
}

// yamlEntries flattens a YAML document into dotted keys: the flat style ("external-resource.gpu.amount:
// 2") and the nested style of Flink 1.19+ config.yaml ("external-resource: {gpu: {amount: 2}}") give
// the same key. Lists become ';'-joined values (Flink's list separator), so "external-resources: [gpu,
// fpga]" works. A second document is an error: Flink reads one.
func yamlEntries(data []byte) ([]yamlEntry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		line := second.Line
		if len(second.Content) > 0 {
			line = second.Content[0].Line
		}
		return nil, fmt.Errorf("line %d: a second YAML document (after '---'); Flink reads only the first: merge them into one", line)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the document is not a mapping of keys to values (key: value)", root.Line)
	}
	var out []yamlEntry
	var limit error
	open := map[*yaml.Node]bool{} // mappings being walked: an alias back to one of them is a cycle
	var walk func(prefix string, n *yaml.Node, depth int)
	var mergeInto func(prefix string, n *yaml.Node, depth, start int, merges []*yaml.Node)
	walk = func(prefix string, n *yaml.Node, depth int) {
		open[n] = true
		defer delete(open, n)
		start := len(out)
		var merges []*yaml.Node // the values of merge keys (<<: *base), applied after the explicit keys
		for i := 0; i+1 < len(n.Content) && limit == nil; i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				merges = append(merges, v)
				continue
			}
			key := k.Value
			if prefix != "" {
				key = prefix + "." + key
			}
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if len(out) >= maxYAMLEntries || len(key) > maxYAMLKeyLen {
				limit = &yamlLimitError{fmt.Sprintf("line %d: flattening aliases gives more than %d keys or a key longer than %d bytes (aliases repeated inside aliases?)",
					k.Line, maxYAMLEntries, maxYAMLKeyLen)}
				return
			}
			switch v.Kind {
			case yaml.MappingNode:
				if open[v] {
					limit = &yamlLimitError{fmt.Sprintf("line %d: key %q is an alias of a mapping that contains it (an alias cycle)", k.Line, bounded(key))}
					return
				}
				if depth >= maxYAMLDepth {
					limit = &yamlLimitError{fmt.Sprintf("line %d: key %q is nested more than %d levels deep", k.Line, bounded(key), maxYAMLDepth)}
					return
				}
				walk(key, v, depth+1)
			case yaml.SequenceNode:
				var items []string
				for _, it := range v.Content {
					if it.Kind == yaml.AliasNode && it.Alias != nil {
						it = it.Alias
					}
					if it.Kind != yaml.ScalarNode {
						// Flink's list is flat: [gpu, [fpga]] would silently lose fpga.
						limit = fmt.Errorf("line %d: key %q: a list item is itself a list or a mapping; give a flat list of values, e.g. [gpu, fpga]", it.Line, bounded(key))
						return
					}
					items = append(items, it.Value)
				}
				out = append(out, yamlEntry{key, strings.Join(items, ";"), k.Line})
			default:
				val := v.Value
				if v.Tag == "!!null" {
					val = ""
				}
				out = append(out, yamlEntry{key, val, k.Line})
			}
		}
		if len(merges) > 0 && limit == nil {
			mergeInto(prefix, n, depth, start, merges)
		}
	}
	// mergeInto applies YAML merge keys as Flink's YAML reader does: the merged mapping's keys, unless
	// the mapping sets them itself or an earlier merged mapping did (TestLoadYAMLMergeKey).
	mergeInto = func(prefix string, n *yaml.Node, depth, start int, merges []*yaml.Node) {
		have := map[string]bool{}
		for _, e := range out[start:] {
			have[e.key] = true
		}
		for _, m := range merges {
			if m.Kind == yaml.AliasNode && m.Alias != nil {
				m = m.Alias
			}
			targets := []*yaml.Node{m}
			if m.Kind == yaml.SequenceNode {
				targets = m.Content
			}
			for _, t := range targets {
				if t.Kind == yaml.AliasNode && t.Alias != nil {
					t = t.Alias
				}
				switch {
				case t.Kind != yaml.MappingNode:
					limit = fmt.Errorf("line %d: the merge key << takes a mapping (<<: *base) or a list of them", t.Line)
				case open[t]:
					limit = &yamlLimitError{fmt.Sprintf("line %d: a merge key merges a mapping that contains it (an alias cycle)", t.Line)}
				case depth >= maxYAMLDepth:
					limit = &yamlLimitError{fmt.Sprintf("line %d: merge keys nested more than %d levels deep", t.Line, maxYAMLDepth)}
				}
				if limit != nil {
					return
				}
				saved := out
				out = nil
				walk(prefix, t, depth+1)
				got := out
				out = saved
				if limit != nil {
					return
				}
				for _, e := range got {
					if !have[e.key] {
						have[e.key] = true
						out = append(out, e)
					}
				}
				if len(out) >= maxYAMLEntries {
					limit = &yamlLimitError{fmt.Sprintf("line %d: flattening merge keys gives more than %d keys (merges repeated inside merges?)", t.Line, maxYAMLEntries)}
					return
				}
			}
		}
	}
	walk("", root, 0)
	if limit != nil {
		return nil, limit
	}
	return out, nil
}

// Bounds of flattening a YAML document (TestLoadYAMLAliasCycleAndBomb): aliases may point back to
// a mapping that contains them (which would recurse forever) or repeat each other (which grows
// exponentially); no real flink-conf.yaml comes near these.
const (
	maxYAMLDepth   = 32
	maxYAMLEntries = 10000
	maxYAMLKeyLen  = 1024
)

// yamlLimitError is valid YAML that cannot be flattened within those bounds.
type yamlLimitError struct{ msg string }

func (e *yamlLimitError) Error() string { return e.msg }

// legacyEntries reads a flink-conf.yaml as Flink does (GlobalConfiguration): per line, '#' starts a
// comment, the rest is trimmed and split at the first ": " into a key and a value, both non-empty. Flink
// skips other lines with a log warning; here they are errors naming the file and line, because a
// skipped line is a setting the user asked for and would not get. One pair of matching quotes around a
// value is removed (YAML habit; Flink would keep them and fail on the value).
func legacyEntries(path string, data []byte) ([]yamlEntry, []Problem) {
	var out []yamlEntry
	var probs []Problem
	bad := func(line int, text, why string) {
		probs = append(probs, Problem{Key: "flink-conf file", Value: text, Origin: fmt.Sprintf("%s:%d", path, line),
			Message: fmt.Sprintf("%s:%d: %q %s; Flink reads a flink-conf.yaml line by line as \"key: value\" (nested YAML only from a file named %s)", BoundArgs([]any{path, line, text, why, FlinkYAMLName})...)})
	}
	for line, text := range strings.Split(string(data), "\n") {
		line++
		conf, _, _ := strings.Cut(text, "#")
		conf = strings.TrimSpace(conf)
		if conf == "" || conf == "---" && line == 1 {
			continue
		}
		if conf == "---" || conf == "..." {
			bad(line, conf, "starts a second YAML document, which Flink does not read")
			continue
		}
		k, v, ok := strings.Cut(conf, ": ")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok && strings.HasSuffix(conf, ":"):
			bad(line, conf, "has no value")
		case !ok && strings.Contains(conf, ":"):
			bad(line, conf, "is not a key: value line (no space after ':'?)")
		case !ok:
			bad(line, conf, "is not a key: value line")
		case k == "":
			bad(line, conf, "has no key")
		case v == "":
			bad(line, conf, "has no value")
		default:
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			out = append(out, yamlEntry{k, v, line})
		}
	}
	return out, probs
}

// yamlWords puts the YAML parser's message about line (1-based, as text) in our words where it has
// words of its own only: a tab in the indentation is "found character that cannot start any token".
func yamlWords(data []byte, line, msg string) string {
	n, err := strconv.Atoi(line)
	if err != nil || !strings.Contains(msg, "cannot start any token") {
		return msg
	}
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		return msg
	}
	text := lines[n-1]
	if indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]; strings.Contains(indent, "\t") {
		return "the line is indented with a tab; YAML indents with spaces only: replace the tab by spaces"
	}
	if strings.Contains(strings.TrimSpace(text), "\t") {
		return "the line has a tab where YAML expects a value; use spaces"
	}
	return msg
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
	best, bestD := "", 3
	for _, good := range []string{KeyResources, strings.TrimSuffix(KeyPrefix, ".")} {
		if d := editDistance(strings.ToLower(first), good); d < bestD {
			best, bestD = good, d
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
