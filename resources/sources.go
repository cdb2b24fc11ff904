package resources

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"
)

// Sources names where the external-resource configuration comes from. Precedence, lowest first:
// FlinkConf < JobFile < Overrides (a later -D wins over an earlier one).
type Sources struct {
	// JobFile is a job.toml (optional). Only the keys external-resources, external-resource.*, the draft
	// external-resource.list and flink-conf are read from it here; every other top-level key or table
	// belongs to the job-file schema and is ignored by Load.
	JobFile string
	// FlinkConf is a flink-conf.yaml (flat "key: value") or a Flink 1.19+ config.yaml (nested YAML),
	// optional. A job file may name one too: flink-conf = "path", relative to the job file; this field
	// wins over that.
	FlinkConf string
	// Overrides are -D key=value flags, in the order given. Flags whose key does not start with
	// "external-resource" are ignored (they belong to other settings).
	Overrides []string
}

// JobFileFlinkConfKey is the job-file key that names a flink-conf.yaml, relative to the job file.
const JobFileFlinkConfKey = "flink-conf"

// Load reads the sources, merges them by precedence and validates the result like Parse. Only
// external-resource keys are read: other keys of the Flink YAML (a Flink configuration has many) and
// other keys and tables of the job file (the job-file schema, read elsewhere) are ignored. A duplicate
// key inside one file is an error naming both lines. Draft spellings are resolved per source, so a
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
	if src.JobFile != "" {
		kv, fc, p := readJobFile(src.JobFile)
		probs = append(probs, p...)
		jobKV = kv
		if flinkConf == "" && fc != "" {
			flinkConf = fc
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

func isResourceKey(k string) bool { return strings.HasPrefix(k, "external-resource") }

func readProblem(kind, path string, err error) Problem {
	if errors.Is(err, fs.ErrNotExist) {
		return Problem{Key: kind, Value: path, Message: fmt.Sprintf("%s %q does not exist", kind, path)}
	}
	return Problem{Key: kind, Value: path, Message: fmt.Sprintf("%s %q cannot be read: %v", kind, path, err)}
}

func duplicate(key, file string, line1, line2 int, v1, v2 string) Problem {
	return Problem{Key: key, Value: v2, Origin: fmt.Sprintf("%s:%d", file, line2),
		Message: fmt.Sprintf("%s is set twice in %s: line %d (%q) and line %d (%q); keep one", key, file, line1, v1, line2, v2)}
}

// --- -D flags ---

func readOverrides(flags []string) (map[string]Value, []Problem) {
	kv := map[string]Value{}
	var probs []Problem
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !isResourceKey(k) {
			continue
		}
		if !ok {
			probs = append(probs, Problem{Key: k, Value: f, Origin: "-D",
				Message: fmt.Sprintf("-D %q: not key=value; write -D %s=<value>", f, k)})
			continue
		}
		kv[k] = Value{V: strings.TrimSpace(v), Origin: "-D"}
	}
	return kv, probs
}

// --- flink-conf.yaml / config.yaml ---

type yamlEntry struct {
	key  string
	val  string
	line int
}

func readFlinkConf(path string) (map[string]Value, []Warning, []Problem) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, []Problem{readProblem("flink-conf file", path, err)}
	}
	var warns []Warning
	entries, yerr := yamlEntries(data)
	var lim *yamlLimitError
	if errors.As(yerr, &lim) {
		// Valid YAML that cannot be flattened: reading it line by line would hide the problem.
		return nil, nil, []Problem{{Key: "flink-conf file", Value: path,
			Message: fmt.Sprintf("flink-conf file %q: %v", path, lim)}}
	}
	if yerr != nil {
		// Flink's legacy flink-conf.yaml parser is line-based and accepts files that are not YAML.
		entries = legacyEntries(data)
		warns = append(warns, Warning{Level: LevelWarning, Key: path,
			Message: fmt.Sprintf("%s is not valid YAML (%v); read it line by line as \"key: value\", as Flink's legacy flink-conf.yaml parser does", path, yerr)})
	}
	kv := map[string]Value{}
	lines := map[string]yamlEntry{}
	var probs []Problem
	for _, e := range entries {
		if !isResourceKey(e.key) {
			continue
		}
		if prev, dup := lines[e.key]; dup {
			probs = append(probs, duplicate(e.key, path, prev.line, e.line, prev.val, e.val))
			continue
		}
		lines[e.key] = e
		kv[e.key] = Value{V: e.val, Origin: fmt.Sprintf("%s:%d", path, e.line)}
	}
	return kv, warns, probs
}

// yamlEntries flattens a YAML document into dotted keys: the flat style of flink-conf.yaml
// ("external-resource.gpu.amount: 2") and the nested style of Flink 1.19+ config.yaml
// ("external-resource: {gpu: {amount: 2}}") give the same key. Lists become ';'-joined values
// (Flink's list separator), so "external-resources: [gpu, fpga]" works.
func yamlEntries(data []byte) ([]yamlEntry, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
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
		return nil, fmt.Errorf("line %d: the document is not a mapping of keys to values", root.Line)
	}
	var out []yamlEntry
	var limit error
	open := map[*yaml.Node]bool{} // mappings being walked: an alias back to one of them is a cycle
	var walk func(prefix string, n *yaml.Node, depth int)
	walk = func(prefix string, n *yaml.Node, depth int) {
		open[n] = true
		defer delete(open, n)
		for i := 0; i+1 < len(n.Content) && limit == nil; i += 2 {
			k, v := n.Content[i], n.Content[i+1]
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
					limit = &yamlLimitError{fmt.Sprintf("line %d: key %q is an alias of a mapping that contains it (an alias cycle)", k.Line, key)}
					return
				}
				if depth >= maxYAMLDepth {
					limit = &yamlLimitError{fmt.Sprintf("line %d: key %q is nested more than %d levels deep", k.Line, key, maxYAMLDepth)}
					return
				}
				walk(key, v, depth+1)
			case yaml.SequenceNode:
				var items []string
				for _, it := range v.Content {
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

// legacyEntries reads "key: value" lines; '#' starts a comment.
func legacyEntries(data []byte) []yamlEntry {
	var out []yamlEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		conf, _, _ := strings.Cut(sc.Text(), "#")
		conf = strings.TrimSpace(conf)
		k, v, ok := strings.Cut(conf, ": ")
		if !ok {
			continue
		}
		out = append(out, yamlEntry{strings.TrimSpace(k), strings.TrimSpace(v), line})
	}
	return out
}

// --- job.toml ---

func readJobFile(path string) (map[string]Value, string, []Problem) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", []Problem{readProblem("job file", path, err)}
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, "", []Problem{{Key: "job file", Value: path, Origin: path,
			Message: fmt.Sprintf("job file %q is not valid TOML: %v", path, err)}}
	}
	lines := tomlKeyLines(data)
	kv := map[string]Value{}
	at := map[string]int{}
	var probs []Problem
	var flinkConf string

	var walk func(segs []string, v any)
	walk = func(segs []string, v any) {
		if m, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(m) {
				walk(append(append([]string{}, segs...), k), m[k])
			}
			return
		}
		key := strings.Join(segs, ".")
		line := lineOf(lines, segs)
		val := tomlString(v)
		origin := path
		if line > 0 {
			origin = fmt.Sprintf("%s:%d", path, line)
		}
		if prev, dup := kv[key]; dup {
			p := duplicate(key, path, at[key], line, prev.V, val)
			if at[key] > line { // name the lines in file order
				p = duplicate(key, path, line, at[key], val, prev.V)
			}
			probs = append(probs, p)
			return
		}
		kv[key] = Value{V: val, Origin: origin}
		at[key] = line
	}
	for _, k := range sortedKeys(doc) {
		switch {
		case k == JobFileFlinkConfKey:
			s, ok := doc[k].(string)
			if !ok || strings.TrimSpace(s) == "" {
				probs = append(probs, Problem{Key: k, Value: tomlString(doc[k]), Origin: path,
					Message: fmt.Sprintf("%s = %s (%s): must be the path of a flink-conf.yaml, relative to the job file", k, tomlString(doc[k]), path)})
				continue
			}
			flinkConf = s
			if !filepath.IsAbs(s) {
				flinkConf = filepath.Join(filepath.Dir(path), s)
			}
		case isResourceKey(k):
			walk([]string{k}, doc[k])
		}
	}
	return kv, flinkConf, probs
}

func tomlString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case []any:
		items := make([]string, len(t))
		for i, it := range t {
			items[i] = tomlString(it)
		}
		return strings.Join(items, ";")
	default:
		return fmt.Sprint(t)
	}
}

// lineOf returns the line of the key path, or of its longest prefix (keys inside inline tables).
func lineOf(lines map[string]int, segs []string) int {
	for n := len(segs); n > 0; n-- {
		if l, ok := lines[strings.Join(segs[:n], "\x00")]; ok {
			return l
		}
	}
	return 0
}
