package resources

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/internal/text"
)

// Configuration keys (Flink's final spelling) and their parts.
const (
	KeyResources = "external-resources"     // ';'-separated resource names, or "none"
	KeyPrefix    = "external-resource."     // + <name>.<sub-key>
	KeyDraftList = "external-resource.list" // draft spelling of external-resources, ','-separated
	NoResources  = "none"                   // reserved value of external-resources
	SubAmount    = "amount"                 // positive integer per TaskExecutor
	SubYarnKey   = "yarn.config-key"        // YARN resource type
	SubK8sKey    = "kubernetes.config-key"  // accepted, unused on YARN
	SubDriver    = "driver-factory.class"   // registered driver name or alias
	SubParam     = "param."                 // + <p>: passed to the driver
	draftDriver  = "driver.class"           // draft of driver-factory.class
	draftYarnKey = "yarn.key"               // draft of yarn.config-key
	draftK8sKey  = "kubernetes.key"         // draft of kubernetes.config-key
	gpuYarnKey   = "yarn.io/gpu"            // the YARN GPU resource type
	gpuDriver    = "gpu"                    // the GPU driver's registered name
	maxAmount    = math.MaxInt32            // larger amounts are typos
	execHint     = "exec (with param.path)" // how to name the exec driver in hints
)

var (
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// A YARN resource type name: an optional DNS-style prefix ending in '/', then a name that starts
	// with a letter (yarn.io/gpu, nvidia.com/gpu, fpga).
	yarnKeyRe = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*/)?[A-Za-z][A-Za-z0-9_.-]*$`)

	knownSubs = []string{SubAmount, SubYarnKey, SubK8sKey, SubDriver, "param.<name>"}
	draftSubs = map[string]string{draftDriver: SubDriver, draftYarnKey: SubYarnKey, draftK8sKey: SubK8sKey}
)

// describe renders `key = "value" (origin)` for messages, naming the key as the user wrote it.
func describe(key string, v Value) string {
	if v.Key != "" {
		key = v.Key
	}
	s := fmt.Sprintf("%s = %s", text.BoundArgs([]any{key})[0], text.Quote(v.V))
	if v.Origin != "" {
		s += " (" + v.Origin + ")"
	}
	return s
}

func shownKey(key string, v Value) string {
	if v.Key != "" {
		return v.Key
	}
	return key
}

func problem(key string, v Value, format string, args ...any) Problem {
	return Problem{Key: shownKey(key, v), Value: v.V, Origin: v.Origin,
		Message: describe(key, v) + ": " + fmt.Sprintf(format, text.BoundArgs(args)...)}
}

func missing(key string, format string, args ...any) Problem {
	return Problem{Key: key, Message: key + " is not set: " + fmt.Sprintf(format, text.BoundArgs(args)...)}
}

// normalize files draft spellings under the final keys (remembering the key as written) and reports
// a conflict when both spellings are set to different values.
func normalize(kv map[string]Value) (map[string]Value, []Warning, []Problem) {
	out := make(map[string]Value, len(kv))
	var warns []Warning
	var probs []Problem
	type draft struct{ from, to string }
	var drafts []draft
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		v := kv[k]
		if v.Key != "" { // already normalized
			out[k] = v
			continue
		}
		switch {
		case k == KeyDraftList:
			drafts = append(drafts, draft{k, KeyResources})
			continue
		case strings.HasPrefix(k, KeyPrefix):
			rest := k[len(KeyPrefix):]
			if dot := strings.IndexByte(rest, '.'); dot > 0 {
				if to, ok := draftSubs[rest[dot+1:]]; ok {
					drafts = append(drafts, draft{k, KeyPrefix + rest[:dot+1] + to})
					continue
				}
			}
		}
		out[k] = v
	}
	for _, d := range drafts {
		v := kv[d.from]
		v.Key = d.from
		warns = append(warns, Warning{Level: LevelWarning, Key: d.from, Value: v.V, Origin: v.Origin,
			Message: fmt.Sprintf("%s: %s is a draft spelling; use %s instead", describe(d.from, v), d.from, d.to)})
		if cur, ok := out[d.to]; ok {
			if !sameSetting(d.to, cur, v) {
				probs = append(probs, Problem{Key: d.from, Value: v.V, Origin: v.Origin,
					Message: fmt.Sprintf("%s and %s disagree: they are two spellings of one setting; remove the draft spelling %s",
						describe(d.from, v), describe(d.to, cur), d.from)})
			}
			continue
		}
		out[d.to] = v
	}
	return out, warns, probs
}

func sameSetting(key string, a, b Value) bool {
	if key == KeyResources {
		return strings.Join(splitList(a), ";") == strings.Join(splitList(b), ";")
	}
	return strings.TrimSpace(a.V) == strings.TrimSpace(b.V)
}

// splitList splits the value of external-resources (';') or of its draft external-resource.list (',').
func splitList(v Value) []string {
	sep := ";"
	if v.Key == KeyDraftList {
		sep = ","
	}
	var out []string
	for _, item := range strings.Split(v.V, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// validate checks a normalized configuration.
func validate(kv map[string]Value) (*Config, []Warning, []Problem) {
	var warns []Warning
	var probs []Problem

	// Per-resource keys, grouped by resource name; other external-resource* keys are unknown.
	perRes := map[string]map[string]Value{}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		v := kv[k]
		switch {
		case k == KeyResources:
		case strings.HasPrefix(k, KeyPrefix):
			rest := k[len(KeyPrefix):]
			dot := strings.IndexByte(rest, '.')
			if dot <= 0 || dot == len(rest)-1 {
				probs = append(probs, problem(k, v, "not a key yarn-am knows; per-resource keys are %s<name>.<key> with <key> one of %s",
					KeyPrefix, strings.Join(knownSubs, ", ")))
				continue
			}
			name, sub := rest[:dot], rest[dot+1:]
			if perRes[name] == nil {
				perRes[name] = map[string]Value{}
			}
			perRes[name][sub] = v
		case strings.HasPrefix(k, "external-resource"):
			probs = append(probs, problem(k, v, "not a key yarn-am knows%s", text.DidYouMean(k, guessKeys(k))))
		}
	}

	// The list of resources.
	var names []string
	listV, listSet := kv[KeyResources]
	explicitNone := false
	if listSet {
		items := splitList(listV)
		seen := map[string]bool{}
		for _, n := range items {
			switch {
			case n == NoResources && len(items) == 1:
				explicitNone = true
			case n == NoResources:
				probs = append(probs, problem(KeyResources, listV, "%q is reserved for \"no external resources\" and cannot be combined with resource names", NoResources))
			case !nameRe.MatchString(n) && len(items) == 1 && strings.ContainsAny(n, ", \t") && listV.Key != KeyDraftList:
				probs = append(probs, problem(KeyResources, listV, "separate resource names with ';' (%s = %q), not with commas or spaces",
					KeyResources, strings.Join(strings.FieldsFunc(n, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }), ";")))
			case !nameRe.MatchString(n):
				probs = append(probs, problem(KeyResources, listV, "resource name %q is not valid: use only letters, digits, '_' and '-'", n))
			case seen[n]:
				probs = append(probs, problem(KeyResources, listV, "resource %q is listed twice", n))
			default:
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
	}

	// Keys of resources that are not listed would be silently dropped: say so.
	for _, n := range slices.Sorted(maps.Keys(perRes)) {
		if listed[n] {
			continue
		}
		var keys []string
		for _, sub := range slices.Sorted(maps.Keys(perRes[n])) {
			keys = append(keys, shownKey(KeyPrefix+n+"."+sub, perRes[n][sub]))
		}
		keyText := strings.Join(keys, ", ")
		verb := "is"
		if len(keys) > 1 {
			verb = "are"
		}
		switch {
		case explicitNone:
			warns = append(warns, Warning{Level: LevelInfo, Key: keys[0],
				Message: fmt.Sprintf("%s %s ignored: %s", keyText, verb, describe(KeyResources, listV)+" disables external resources")})
		case !nameRe.MatchString(n):
			probs = append(probs, Problem{Key: keys[0], Message: fmt.Sprintf("%s: resource name %q is not valid: use only letters, digits, '_' and '-'", keyText, n)})
		case !listSet:
			probs = append(probs, Problem{Key: keys[0], Message: fmt.Sprintf("%s %s set but %s is not set, so resource %q would be ignored; add it: %s = %q",
				keyText, verb, KeyResources, n, KeyResources, n)})
		default:
			probs = append(probs, Problem{Key: keys[0], Value: listV.V, Origin: listV.Origin,
				Message: fmt.Sprintf("%s %s set but resource %q is not listed in %s, so it would be ignored; add it: %s = %q",
					keyText, verb, n, describe(KeyResources, listV), KeyResources, strings.Join(append(append([]string{}, names...), n), ";"))})
		}
	}

	cfg := &Config{}
	yarnOwner := map[string]string{} // YARN key -> resource that uses it
	for _, n := range names {
		r, w, p := validateResource(n, perRes[n])
		warns = append(warns, w...)
		probs = append(probs, p...)
		if r.YarnKey != "" {
			if other, dup := yarnOwner[r.YarnKey]; dup {
				k := KeyPrefix + n + "." + SubYarnKey
				probs = append(probs, problem(k, perRes[n][SubYarnKey],
					"resource %q already uses YARN resource type %s (%s); two resources cannot share one YARN resource type: make them one resource with the summed amount",
					other, r.YarnKey, describe(KeyPrefix+other+"."+SubYarnKey, perRes[other][SubYarnKey])))
			} else {
				yarnOwner[r.YarnKey] = n
			}
		}
		cfg.Resources = append(cfg.Resources, r)
	}
	return cfg, warns, probs
}

// guessKeys offers corrections for a key that starts with "external-resource" but is not one.
func guessKeys(k string) []string {
	out := []string{KeyResources}
	if dot := strings.IndexByte(k, '.'); dot > 0 {
		out = append(out, KeyPrefix+k[dot+1:])
	}
	return out
}

func looksLikeGPU(name, driver string) bool {
	if strings.Contains(strings.ToLower(name), "gpu") || strings.Contains(strings.ToLower(driver), "gpu") {
		return true
	}
	return false
}

func validateResource(n string, keys map[string]Value) (Resource, []Warning, []Problem) {
	var warns []Warning
	var probs []Problem
	key := func(sub string) string { return KeyPrefix + n + "." + sub }
	r := Resource{Name: n, Params: map[string]string{}}

	for _, sub := range slices.Sorted(maps.Keys(keys)) {
		v := keys[sub]
		switch {
		case sub == SubAmount, sub == SubYarnKey, sub == SubK8sKey, sub == SubDriver:
		case strings.HasPrefix(sub, SubParam) && len(sub) > len(SubParam):
			r.Params[sub[len(SubParam):]] = v.V
		default:
			cands := []string{SubAmount, SubYarnKey, SubK8sKey, SubDriver}
			if strings.HasPrefix(sub, "param") || strings.HasPrefix(sub, "parm") || strings.HasPrefix(sub, "params") {
				if dot := strings.IndexByte(sub, '.'); dot > 0 {
					cands = append(cands, SubParam+sub[dot+1:])
				}
			}
			hint := text.DidYouMean(sub, cands)
			if hint != "" {
				hint = strings.Replace(hint, `"`, `"`+KeyPrefix+n+".", 1)
			}
			probs = append(probs, problem(key(sub), v, "unknown key%s; the keys of a resource are %s", hint, listKeys(n)))
		}
	}

	// amount
	if v, ok := keys[SubAmount]; !ok {
		probs = append(probs, missing(key(SubAmount), "resource %q is listed in %s but has no amount; set a positive integer per TaskExecutor, e.g. %s: 1",
			n, KeyResources, key(SubAmount)))
	} else if a, err := strconv.ParseInt(strings.TrimSpace(v.V), 10, 64); err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !strings.HasPrefix(strings.TrimSpace(v.V), "-") {
			probs = append(probs, problem(key(SubAmount), v, "too large; at most %d per TaskExecutor", maxAmount))
		} else {
			probs = append(probs, problem(key(SubAmount), v, "not an integer; the amount is a whole number of devices per TaskExecutor, e.g. 1"))
		}
	} else if a <= 0 {
		probs = append(probs, problem(key(SubAmount), v, "must be at least 1 (to use no %s, remove %q from %s)", n, n, KeyResources))
	} else if a > maxAmount {
		probs = append(probs, problem(key(SubAmount), v, "too large; at most %d per TaskExecutor", maxAmount))
	} else {
		r.Amount = a
	}

	driverV, driverSet := keys[SubDriver]
	if driverSet {
		r.Driver = strings.TrimSpace(driverV.V)
	}

	// yarn.config-key
	if v, ok := keys[SubYarnKey]; !ok {
		example := "yarn.io/fpga"
		if looksLikeGPU(n, r.Driver) {
			example = gpuYarnKey
		}
		probs = append(probs, missing(key(SubYarnKey), "without it YARN is never asked for %q; set the YARN resource type, e.g. %s: %s",
			n, key(SubYarnKey), example))
	} else {
		yk := strings.TrimSpace(v.V)
		switch {
		case yk == "memory-mb" || yk == "memory" || yk == "vcores":
			probs = append(probs, problem(key(SubYarnKey), v, "%s is YARN's built-in %s resource, not an external resource; set the TaskExecutor's memory and vcores in the job file instead",
				yk, map[bool]string{true: "CPU", false: "memory"}[yk == "vcores"]))
		case !yarnKeyRe.MatchString(yk):
			probs = append(probs, problem(key(SubYarnKey), v, "not a valid YARN resource type name: use an optional DNS-style prefix and a name that starts with a letter, e.g. %s",
				map[bool]string{true: gpuYarnKey, false: "yarn.io/fpga"}[looksLikeGPU(n, r.Driver)]))
		default:
			r.YarnKey = yk
		}
	}

	// kubernetes.config-key
	if v, ok := keys[SubK8sKey]; ok {
		r.KubernetesKey = strings.TrimSpace(v.V)
		warns = append(warns, Warning{Level: LevelInfo, Key: shownKey(key(SubK8sKey), v), Value: v.V, Origin: v.Origin,
			Message: describe(key(SubK8sKey), v) + ": accepted for compatibility with Flink, unused on YARN"})
	}

	// driver
	switch {
	case driverSet && r.Driver == "":
		probs = append(probs, problem(key(SubDriver), driverV, "empty; name a registered driver (%s) or leave the key out", registeredDriversText()))
	case driverSet:
		f, ok := LookupDriver(r.Driver)
		if !ok {
			probs = append(probs, problem(key(SubDriver), driverV,
				"unknown driver; registered drivers: %s. For a device without a built-in driver use the exec driver: %s: exec and %s: <your discovery program>",
				registeredDriversText(), key(SubDriver), key(SubParam+ExecParamPath)))
		} else if _, err := f(n, copyParams(r.Params)); err != nil {
			probs = append(probs, problem(key(SubDriver), driverV, "the driver rejected its parameters: %v", err))
		}
	case r.YarnKey == gpuYarnKey:
		if f, ok := LookupDriver(gpuDriver); ok {
			r.Driver = gpuDriver
			warns = append(warns, Warning{Level: LevelInfo, Key: key(SubDriver),
				Message: fmt.Sprintf("%s is not set: resource %q is %s, so the built-in GPU driver (%q) discovers its devices", key(SubDriver), n, gpuYarnKey, gpuDriver)})
			if _, err := f(n, copyParams(r.Params)); err != nil {
				probs = append(probs, Problem{Key: key(SubDriver), Message: fmt.Sprintf("%s (default for %s): the driver rejected its parameters: %v", key(SubDriver), gpuYarnKey, err)})
			}
		} else {
			warns = append(warns, noDriverWarning(n, r.YarnKey))
		}
	case r.YarnKey != "":
		warns = append(warns, noDriverWarning(n, r.YarnKey))
	}
	if r.Driver == "" && len(r.Params) > 0 && !driverSet {
		warns = append(warns, Warning{Level: LevelWarning, Key: key(SubParam + slices.Sorted(maps.Keys(r.Params))[0]),
			Message: fmt.Sprintf("%s%s* set but resource %q has no driver: the parameters are unused", KeyPrefix, n+"."+SubParam, n)})
	}
	return r, warns, probs
}

func noDriverWarning(n, yarnKey string) Warning {
	k := KeyPrefix + n + "." + SubDriver
	return Warning{Level: LevelWarning, Key: k,
		Message: fmt.Sprintf("%s is not set: resource %q is requested from YARN as %s but the worker gets no device infos; set it to %s to discover them", k, n, yarnKey, execHint)}
}

func listKeys(n string) string {
	var s []string
	for _, sub := range knownSubs {
		s = append(s, KeyPrefix+n+"."+sub)
	}
	return strings.Join(s, ", ")
}

func copyParams(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
