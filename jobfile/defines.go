package jobfile

import (
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/yarn-am/yarn-am/internal/text"
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
			case "placement": // a table: its keys below
			case "files", "archives":
				k[table+"."+key] = kindList
			case "command", "locality", "gang-timeout", "elastic-interval", "visibility":
				k[table+"."+key] = kindString
			default:
				k[table+"."+key] = kindValue
			}
		}
	}
	k["taskexecutor.placement.max-per-node"] = kindValue
	k["taskexecutor.placement.node-attributes"] = kindList
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
// In a job with a framework table that takes -D keys (TableInfo.DefinesTo: [flink] → [flink.config],
// docs/flink.md#configuration), <name>.<DefinesTo>.<key>=v, or a bare key that is not a job key
// (taskmanager.numberOfTaskSlots=2), is put in that sub-table, replacing the file's, and kept in order
// for Job's Framework.Defines, which the AM hands to the framework's processes; the external-resource
// ones reach the framework too.
func (f *File) ApplyDefines(defines []string) (resourceDefines []string, err error) {
	kinds := defineKinds()
	var probs []string
	fw, hasFramework := frameworkIn(f.doc)
	takes := hasFramework && fw.DefinesTo != ""
	fwT, _ := f.doc[fw.Name].(map[string]any)
	for _, d := range defines {
		k, v, hasValue := strings.Cut(d, "=")
		k = strings.TrimSpace(k)
		if strings.ContainsAny(d, "\n\r") {
			// A value read as TOML would keep its first line and drop the rest without a word.
			probs = append(probs, sprintf("-D %s: the value %s has a line break (a newline or carriage return); a -D value is one line (docs/job-file.md#-d-overrides)", k, text.Quote(v)))
			continue
		}
		if resources.IsResourceKey(k) {
			resourceDefines = append(resourceDefines, d)
			if takes {
				f.frameworkDefines = append(f.frameworkDefines, k+"="+strings.TrimSpace(v))
			}
			continue
		}
		if info, fk, ok := frameworkDefineKey(k, kinds, fw, takes); ok {
			switch {
			case !takes || info.Name != fw.Name:
				probs = append(probs, sprintf("-D %s: the job has no [%s] table; %s.%s.<key> sets a %s of a [%s] job (%s)", bounded(k), info.Name, info.Name, info.DefinesTo, info.KeyNoun, info.Name, info.DefinesDoc))
			case fk == "" || !hasValue:
				probs = append(probs, sprintf("-D %s: want a %s and its value, e.g. -D %s or -D %s.%s.%s", bounded(d), fw.KeyNoun, fw.DefineExample, fw.Name, fw.DefinesTo, fw.DefineExample))
			default:
				v = strings.TrimSpace(v)
				cfg, ok := fwT[fw.DefinesTo].(map[string]any)
				if !ok {
					if _, set := fwT[fw.DefinesTo]; !set && fwT != nil {
						cfg = map[string]any{}
						fwT[fw.DefinesTo] = cfg
					}
				}
				if cfg != nil {
					cfg[fk] = v // validated with the file's: a key the framework sets itself is refused there
				}
				f.frameworkDefines = append(f.frameworkDefines, fk+"="+v)
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
			hint := text.DidYouMean(k, DefineKeys())
			if want, near := resources.NearResourceKey(k); near {
				hint = ` (did you mean "` + want + `"?)`
			}
			force := ""
			if takes {
				force = sprintf("; to give it to %s as a %s anyway, write -D %s.%s.%s", fw.Name, fw.KeyNoun, fw.Name, fw.DefinesTo, k)
			}
			probs = append(probs, sprintf("-D %s: not a job key or an external-resource key%s; -D sets the keys of the job file (name, queue, am.memory, taskexecutor.instances, ...) and %s and %s<name>.* (docs/job-file.md#-d-overrides)%s",
				k, hint, resources.KeyResources, resources.KeyPrefix, force))
			continue
		}
		f.set(strings.Split(k, "."), defineValue(kind, v))
	}
	if len(probs) > 0 {
		return nil, &JobError{Path: f.Path, Problems: probs}
	}
	return resourceDefines, nil
}

// frameworkDefineKey reports whether -D key is a framework's key and returns the framework and the
// key: <name>.<DefinesTo>.<key> of any registered framework (an error in a job without that table,
// reported by the caller), and in a job whose framework takes -D keys also a bare key that is not a job
// key. A key under a job table (am., taskexecutor., policy., <name>.) is never the framework's, so a
// typo of a job key is still an error, not a framework key.
func frameworkDefineKey(k string, kinds map[string]int, fw TableInfo, takes bool) (TableInfo, string, bool) {
	ts := registeredTables()
	for _, name := range slices.Sorted(maps.Keys(ts)) {
		info := ts[name]
		if info.DefinesTo == "" {
			continue
		}
		sub := info.Name + "." + info.DefinesTo
		if fk, ok := strings.CutPrefix(k, sub+"."); ok {
			return info, fk, true
		}
		if k == sub {
			return info, "", true
		}
	}
	if !takes || k == "" {
		return TableInfo{}, "", false
	}
	if _, known := kinds[k]; known {
		return TableInfo{}, "", false
	}
	for _, table := range []string{"am.", "taskexecutor.", "policy.", fw.Name + "."} {
		if strings.HasPrefix(k, table) {
			return TableInfo{}, "", false
		}
	}
	// A near miss of a job key (taskexecuter.instances, queu) is a typo, not a framework key: passed on,
	// it would leave the job's value as it was without a word. The explicit <name>.<DefinesTo>.<key>
	// form above gives it to the framework anyway (TestApplyDefinesRefusesANearMissOfAJobKey).
	if text.DidYouMean(k, slices.Collect(maps.Keys(kinds))) != "" {
		return TableInfo{}, "", false
	}
	return fw, k, true
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
