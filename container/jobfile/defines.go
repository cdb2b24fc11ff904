package jobfile

import (
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/yarn-am/yarn-am/resources"
)

// This file applies -D key=value to a job file: every key of the job file may be set on the command
// line, as Flink's -D sets any configuration key (docs/job-file.md#-d-overrides). A -D value replaces
// the file's before the file is validated, so it gets exactly the file's checks and messages.

// Kinds of job-file values, for reading a -D value as the file would hold it.
const (
	kindString = iota // the value as written
	kindList          // a TOML array (["a", "b"]), else ';'-separated, as Flink writes lists
	kindValue         // a TOML value (4, true, 1.5, "2g"), else the value as a string
)

// defineKinds are the job keys -D sets, by their dotted names; taskexecutor.env.<NAME> too.
func defineKinds() map[string]int {
	k := map[string]int{
		"name": kindString, "queue": kindString, "flink-conf": kindString, "tags": kindList,
		"priority": kindValue, "max-attempts": kindValue, "keep-containers": kindValue, "hdfs-namenodes": kindList,
	}
	for table, keys := range map[string][]string{"am": amKeys, "taskexecutor": teKeys} {
		for _, key := range keys {
			switch key {
			case "env": // <table>.env.<NAME>: ApplyDefines
			case "files", "archives":
				k[table+"."+key] = kindList
			case "command", "locality", "gang-timeout", "elastic-interval", "visibility":
				k[table+"."+key] = kindString
			default:
				k[table+"."+key] = kindValue
			}
		}
	}
	for _, p := range policyFields { // durations and the action as written, counts as TOML values
		k["policy."+p.key] = kindString
		if p.kind == policyCount {
			k["policy."+p.key] = kindValue
		}
	}
	return k
}

// DefineKeys lists the job keys -D sets (for messages and the did-you-mean).
func DefineKeys() []string {
	var keys []string
	for k := range defineKinds() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return append(keys, "am.env.<NAME>", "taskexecutor.env.<NAME>")
}

// ApplyDefines sets the job keys among defines (-D key=value, in order: the last one wins) in the
// decoded file, and returns the external-resource ones for resources.Load. A -D key that is neither is
// an error naming it, with a did-you-mean.
//
// In a job with a [flink] table, -D also sets Flink's configuration (docs/flink.md#configuration):
// flink.config.<key>=v, or a bare key that is not a job key (taskmanager.numberOfTaskSlots=2), is
// put in [flink.config], replacing the file's, and kept in order for Job's Flink.Defines, which the
// AM hands to the JobManager and the TaskManagers; the external-resource ones reach Flink too.
func (f *File) ApplyDefines(defines []string) (resourceDefines []string, err error) {
	kinds := defineKinds()
	var probs []string
	flinkT, isFlink := f.doc["flink"].(map[string]any)
	for _, d := range defines {
		k, v, hasValue := strings.Cut(d, "=")
		k = strings.TrimSpace(k)
		if resources.IsResourceKey(k) {
			resourceDefines = append(resourceDefines, d)
			if isFlink {
				f.flinkDefines = append(f.flinkDefines, k+"="+strings.TrimSpace(v))
			}
			continue
		}
		if fk, ok := flinkDefineKey(k, kinds, isFlink); ok {
			switch {
			case !isFlink:
				probs = append(probs, sprintf("-D %s: the job has no [flink] table; flink.config.<key> sets a Flink key of a [flink] job (docs/flink.md#configuration)", bounded(k)))
			case fk == "" || !hasValue:
				probs = append(probs, sprintf("-D %s: want a Flink key and its value, e.g. -D taskmanager.numberOfTaskSlots=2 or -D flink.config.taskmanager.numberOfTaskSlots=2", bounded(d)))
			default:
				v = strings.TrimSpace(v)
				cfg, ok := flinkT["config"].(map[string]any)
				if !ok {
					if _, set := flinkT["config"]; !set {
						cfg = map[string]any{}
						flinkT["config"] = cfg
					}
				}
				if cfg != nil {
					cfg[fk] = v // validated with the file's: a key yarn-am sets is refused there
				}
				f.flinkDefines = append(f.flinkDefines, fk+"="+v)
			}
			continue
		}
		kind, known := kinds[k]
		for _, table := range []string{"taskexecutor", "am"} {
			if name, isEnv := strings.CutPrefix(k, table+".env."); isEnv && name != "" {
				kind, known = kindString, true
			}
		}
		if !known {
			hint := resources.DidYouMean(k, DefineKeys())
			if want, near := resources.NearResourceKey(k); near {
				hint = ` (did you mean "` + want + `"?)`
			}
			probs = append(probs, sprintf("-D %s: not a job key or an external-resource key%s; -D sets the keys of the job file (name, queue, am.memory, taskexecutor.instances, ...) and %s and %s<name>.* (docs/job-file.md#-d-overrides)",
				k, hint, resources.KeyResources, resources.KeyPrefix))
			continue
		}
		f.set(strings.Split(k, "."), defineValue(kind, v))
	}
	if len(probs) > 0 {
		return nil, &JobError{Path: f.Path, Problems: probs}
	}
	return resourceDefines, nil
}

// flinkDefineKey reports whether -D key is a Flink key and returns it: flink.config.<key> in any job
// (an error without [flink], reported by the caller), and in a [flink] job also a bare key that is not a
// job key. A key under a job table (am., taskexecutor., policy., flink.) is never Flink's, so a typo
// of a job key is still an error, not a Flink key.
func flinkDefineKey(k string, kinds map[string]int, isFlink bool) (string, bool) {
	if fk, ok := strings.CutPrefix(k, "flink.config."); ok {
		return fk, true
	}
	if k == "flink.config" {
		return "", true
	}
	if !isFlink || k == "" {
		return "", false
	}
	if _, known := kinds[k]; known {
		return "", false
	}
	for _, table := range []string{"am.", "taskexecutor.", "policy.", "flink."} {
		if strings.HasPrefix(k, table) {
			return "", false
		}
	}
	return k, true
}

// set puts v at the dotted path segs of the document, making the tables on the way. A table the file
// gives a value of another type is left as it is: Job reports that value.
func (f *File) set(segs []string, v any) {
	m := f.doc
	for _, s := range segs[:len(segs)-1] {
		next, ok := m[s]
		if !ok {
			t := map[string]any{}
			m[s] = t
			m = t
			continue
		}
		if m, ok = next.(map[string]any); !ok {
			return
		}
	}
	m[segs[len(segs)-1]] = v
}

// defineValue reads a -D value as the job file would hold it.
func defineValue(kind int, v string) any {
	switch kind {
	case kindString:
		return v
	case kindList:
		if strings.HasPrefix(strings.TrimSpace(v), "[") {
			if x, ok := tomlValue(v); ok {
				return x
			}
		}
		var items []any
		for _, it := range strings.Split(v, ";") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		return items
	}
	if x, ok := tomlValue(v); ok {
		return x
	}
	return strings.TrimSpace(v)
}

// tomlValue decodes v as a TOML value.
func tomlValue(v string) (any, bool) {
	var doc map[string]any
	if _, err := toml.Decode("v = "+v, &doc); err != nil {
		return nil, false
	}
	x, ok := doc["v"]
	return x, ok
}
