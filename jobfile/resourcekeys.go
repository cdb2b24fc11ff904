package jobfile

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/resources"
)

// resourceConfKey is the job-file key that names a flink-conf.yaml, relative to the job file.
const resourceConfKey = "flink-conf"

// ResourceKeys picks the external-resource keys out of the job file for resources.Load
// (resources.Sources.Job): external-resources, external-resource.* and the draft
// external-resource.list, flattened to dotted keys — a table, a dotted key and a quoted key give the
// same key, and the same key written twice is a problem naming both lines — and the flink-conf the job
// names. Every other key belongs to the job-file schema (Job) or the [policy] table (Policy).
func (f *File) ResourceKeys() *resources.JobKeys {
	jk := &resources.JobKeys{Path: f.Path, Values: map[string]resources.Value{}}
	at := map[string]int{}

	var walk func(segs []string, v any)
	walk = func(segs []string, v any) {
		if m, ok := v.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				walk(append(slices.Clone(segs), k), m[k])
			}
			return
		}
		key := strings.Join(segs, ".")
		line := lineOf(f.lines, segs)
		val := tomlString(v)
		origin := f.Path
		if line > 0 {
			origin = fmt.Sprintf("%s:%d", f.Path, line)
		}
		if prev, dup := jk.Values[key]; dup {
			p := resources.Duplicate(key, f.Path, at[key], line, prev.V, val)
			if at[key] > line { // name the lines in file order
				p = resources.Duplicate(key, f.Path, line, at[key], val, prev.V)
			}
			jk.Problems = append(jk.Problems, p)
			return
		}
		jk.Values[key] = resources.Value{V: val, Origin: origin}
		at[key] = line
	}
	for _, k := range slices.Sorted(maps.Keys(f.doc)) {
		v := f.doc[k]
		switch {
		case k == resourceConfKey:
			s, ok := v.(string)
			if !ok || strings.TrimSpace(s) == "" {
				jk.Problems = append(jk.Problems, resources.Problem{Key: k, Value: tomlString(v), Origin: f.Path,
					Message: sprintf("%s = %s (%s): must be the path of a flink-conf.yaml, relative to the job file", k, tomlString(v), f.Path)})
				continue
			}
			jk.ResourceConf = s
			if !filepath.IsAbs(s) {
				jk.ResourceConf = filepath.Join(filepath.Dir(f.Abs), s)
			}
		case k == resources.KeyResources && !isStringOrStrings(v):
			jk.Problems = append(jk.Problems, resources.Problem{Key: k, Value: tomlString(v), Origin: f.Path,
				Message: sprintf("%s = %s (%s): want a string of resource names separated by ';', e.g. %s = \"gpu;fpga\"", k, tomlString(v), f.Path, k)})
		case resources.IsResourceKey(k):
			walk([]string{k}, v)
		}
	}
	return jk
}

// ReadResourceKeys reads the job file at path for its external-resource keys only (yarn-am launch and
// discover, in a container: the schema was checked by submit). A file that cannot be read or decoded
// is the one problem of the result, so resources.Load reports it with the rest.
func ReadResourceKeys(path string) *resources.JobKeys {
	f, err := Read(path)
	if err != nil {
		return &resources.JobKeys{Path: path, Problems: []resources.Problem{{Key: "job file", Value: path, Origin: path, Message: err.Error()}}}
	}
	return f.ResourceKeys()
}

// isStringOrStrings reports whether a TOML value is a string or a list of strings.
func isStringOrStrings(v any) bool {
	switch t := v.(type) {
	case string:
		return true
	case []any:
		for _, it := range t {
			if _, ok := it.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}

// tomlString renders a TOML value as a configuration value: lists are ';'-joined (Flink's list
// separator), integers decimal.
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
