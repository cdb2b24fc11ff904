package jobfile

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the failure policy's one definition: its keys, their types, bounds, defaults and usage
// text (policyFields). The job file's [policy] table and the `yarn-am am` flags of the same names are
// both read through it into a Policy value, which the AM takes as its runtime configuration; every
// problem names what the user wrote: policy.<key> = value for the file, --<key>=value for a flag
// (docs/job-file.md#the-policy-table).
//
//	[policy]
//	max-failure-rate = 10          # counted failures allowed within failure-window
//	failure-window = "5m"
//	restart-backoff = "1s"
//	restart-backoff-max = "1m"
//	node-max-failures = 3           # failures on one node within failure-window that exclude it
//	node-exclusion-timeout = "10m"
//	pending-timeout = "1m"          # asks pending without an allocation → not-enough-resources
//	on-pending-timeout = "wait"     # or "fail"

// The values of policy.on-pending-timeout.
const (
	PendingWait = "wait"
	PendingFail = "fail"
)

// Policy is the failure policy the job declares: the [policy] table over the defaults, then the AM's
// flags over the table. Counts take -1 for off; what each rule does is in docs/running.md#failure-policy.
type Policy struct {
	MaxFailureRate       int           // counted failures allowed within FailureWindow
	FailureWindow        time.Duration // sliding window of the failure rate and of node exclusion
	RestartBackoff       time.Duration // first wait before replacing a failed TaskExecutor
	RestartBackoffMax    time.Duration // cap of the doubling wait
	NodeMaxFailures      int           // counted failures on one node within FailureWindow that exclude it
	NodeExclusionTimeout time.Duration // how long a node stays excluded
	PendingTimeout       time.Duration // asks pending without an allocation this long → not-enough-resources
	OnPendingTimeout     string        // PendingWait or PendingFail
}

// DefaultPolicy is the policy of a job file without [policy] (the defaults in `yarn-am help am` and
// docs/job-file.md#the-policy-table).
func DefaultPolicy() Policy {
	var p Policy
	for _, f := range policyFields {
		f.set(&p, f.def)
	}
	return p
}

// Kinds of policy values: what the file holds and the flag parses.
const (
	policyCount    = iota // an integer from -1 (off) to maxPolicyCount
	policyDuration        // a positive duration
	policyAction          // PendingWait or PendingFail
)

// maxPolicyCount bounds the counts: beyond it a limit is no limit, and a typo is more likely.
const maxPolicyCount = 1000000

// policyField is one key of the policy: its name (the [policy] key and the flag), kind, default,
// usage and where it lives in Policy.
type policyField struct {
	key   string
	kind  int
	def   any      // int, time.Duration or string, by kind
	usage []string // the lines of its `yarn-am am --help` text, without the default
	set   func(*Policy, any)
}

// policyFields is the policy, in the order of `yarn-am help am`.
var policyFields = []policyField{
	{key: "max-failure-rate", kind: policyCount, def: 10,
		usage: []string{"counted TaskExecutor failures allowed within --failure-window before the", "application fails; -1 turns the rule off"},
		set:   func(p *Policy, v any) { p.MaxFailureRate = v.(int) }},
	{key: "failure-window", kind: policyDuration, def: 5 * time.Minute,
		usage: []string{"sliding window of --max-failure-rate and --node-max-failures"},
		set:   func(p *Policy, v any) { p.FailureWindow = v.(time.Duration) }},
	{key: "restart-backoff", kind: policyDuration, def: time.Second,
		usage: []string{"wait before replacing a failed TaskExecutor, doubling with each further", "failure in the window"},
		set:   func(p *Policy, v any) { p.RestartBackoff = v.(time.Duration) }},
	{key: "restart-backoff-max", kind: policyDuration, def: time.Minute,
		usage: []string{"cap of that wait"},
		set:   func(p *Policy, v any) { p.RestartBackoffMax = v.(time.Duration) }},
	{key: "node-max-failures", kind: policyCount, def: 3,
		usage: []string{"failures on one node within the window that exclude the node (YARN", "blacklist) for this application; -1 turns exclusion off"},
		set:   func(p *Policy, v any) { p.NodeMaxFailures = v.(int) }},
	{key: "node-exclusion-timeout", kind: policyDuration, def: 10 * time.Minute,
		usage: []string{"how long a node stays excluded"},
		set:   func(p *Policy, v any) { p.NodeExclusionTimeout = v.(time.Duration) }},
	{key: "pending-timeout", kind: policyDuration, def: time.Minute,
		usage: []string{"containers asked for with no allocation this long → a not-enough-resources", "event with the cluster's capacity, repeated at a doubling interval"},
		set:   func(p *Policy, v any) { p.PendingTimeout = v.(time.Duration) }},
	{key: "on-pending-timeout", kind: policyAction, def: PendingWait,
		usage: []string{"wait (keep asking) or fail (end the application FAILED)"},
		set:   func(p *Policy, v any) { p.OnPendingTimeout = v.(string) }},
}

// PolicyKeys are the keys of the job file's [policy] table, which are also the AM's flags.
func PolicyKeys() []string {
	keys := make([]string, len(policyFields))
	for i, f := range policyFields {
		keys[i] = f.key
	}
	return keys
}

func lookupPolicyField(key string) (policyField, bool) {
	i := slices.IndexFunc(policyFields, func(f policyField) bool { return f.key == key })
	if i < 0 {
		return policyField{}, false
	}
	return policyFields[i], true
}

// want says what a key of this kind takes; quoted: as the job file writes it (durations are TOML
// strings there).
func (f policyField) want(quoted bool) string {
	switch f.kind {
	case policyCount:
		return fmt.Sprintf("want an integer from -1 (off) to %d", maxPolicyCount)
	case policyDuration:
		if quoted {
			return `want a positive duration in quotes, like "30s" or "5m"`
		}
		return "want a positive duration like 30s or 5m"
	}
	return fmt.Sprintf("want %q or %q", PendingWait, PendingFail)
}

// parse checks v (a decoded TOML value, or a flag's string when fromFlag) against the field's kind
// and bounds and returns it as set takes it.
func (f policyField) parse(v any, fromFlag bool) (any, bool) {
	s, isString := v.(string)
	switch f.kind {
	case policyCount:
		n, ok := v.(int64)
		if fromFlag {
			var err error
			n, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			ok = err == nil
		}
		if !ok || n < -1 || n > maxPolicyCount {
			return nil, false
		}
		return int(n), true
	case policyDuration:
		d, err := time.ParseDuration(s)
		if !isString || err != nil || d <= 0 {
			return nil, false
		}
		return d, true
	}
	if !isString || (s != PendingWait && s != PendingFail) {
		return nil, false
	}
	return s, true
}

// Policy returns the job's failure policy: the [policy] table over DefaultPolicy. Every problem
// names the key, its value and what is valid (`policy.pending-timeout = soon: want ...`); a job file
// without [policy] gives the defaults.
func (f *File) Policy() (Policy, error) {
	p := DefaultPolicy()
	var problems []string
	r := reader{add: func(format string, a ...any) { problems = append(problems, sprintf(format, a...)) }}
	table := r.table(f.doc, "policy", "policy")
	for _, k := range slices.Sorted(maps.Keys(table)) {
		v := table[k]
		field, ok := lookupPolicyField(k)
		if !ok {
			problems = append(problems, sprintf("policy.%s: unknown key; valid keys are %s", k, strings.Join(PolicyKeys(), ", ")))
			continue
		}
		x, ok := field.parse(v, false)
		if !ok {
			problems = append(problems, sprintf("policy.%s = %v: %s", k, v, field.want(true)))
			continue
		}
		field.set(&p, x)
	}
	if len(problems) > 0 {
		return Policy{}, fmt.Errorf("job file %s: %s", f.Path, strings.Join(problems, "; "))
	}
	return p, nil
}

// PolicyFlags are the AM's flags of the [policy] keys (--max-failure-rate, ...): what the command line
// said, checked by Apply with the same definition as the table's keys. They win over the table.
type PolicyFlags struct {
	given []policyFlag // in command-line order: the last of a repeated flag wins
}

type policyFlag struct{ key, value string }

// Register defines the policy flags on fs. The flag package only collects the values; Apply checks
// them, so that a flag and its key share bounds and words.
func (pf *PolicyFlags) Register(fs *flag.FlagSet) {
	for _, f := range policyFields {
		fs.Func(f.key, "", func(s string) error {
			pf.given = append(pf.given, policyFlag{f.key, s})
			return nil
		})
	}
}

// Apply sets the flags given on p. A problem names the flag as written (--pending-timeout=soon) and
// what is valid; all of them are reported.
func (pf *PolicyFlags) Apply(p *Policy) error {
	var problems []string
	for _, g := range pf.given {
		field, _ := lookupPolicyField(g.key)
		x, ok := field.parse(g.value, true)
		if !ok {
			problems = append(problems, sprintf("--%s=%s: %s", g.key, g.value, field.want(false)))
			continue
		}
		field.set(p, x)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// PolicyFlagsUsage documents the policy flags for `yarn-am am --help` (docs/commands.md).
func PolicyFlagsUsage() string {
	var b strings.Builder
	const indent = 31 // where a flag's text starts
	for _, f := range policyFields {
		arg := map[int]string{policyCount: "N", policyDuration: "DUR", policyAction: "ACTION"}[f.kind]
		lines := slices.Clone(f.usage)
		lines[len(lines)-1] += fmt.Sprintf(" (default %v)", f.def)
		fmt.Fprintf(&b, "  %-*s%s\n", indent-2, "--"+f.key+" "+arg, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "%*s%s\n", indent, "", l)
		}
	}
	b.WriteString("  Failures that are not the worker's fault (preempted, node lost, disks failed, killed by the AM or RM)\n  never count.")
	return b.String()
}
