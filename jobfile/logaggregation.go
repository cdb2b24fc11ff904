package jobfile

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// LogAggregation is the [log-aggregation] table: which of the containers' log files the NodeManagers
// upload to HDFS, at the application's end (Include, Exclude) and, while it runs, in YARN's rolling
// log aggregation (RolledInclude, RolledExclude), the LogAggregationContext of the application's
// submission (docs/job-file.md#log-aggregation). Each is a Java regular expression the NodeManager
// finds in a file's name; "" leaves it out (rolled-include = "" turns a framework's default off). Set says the job gives the context at all: without it
// the submission carries none and the cluster's defaults apply.
type LogAggregation struct {
	Include, Exclude             string
	RolledInclude, RolledExclude string
	Set                          bool
}

// logAggregationKeys are the keys of [log-aggregation].
var logAggregationKeys = []string{"include", "exclude", "rolled-include", "rolled-exclude"}

// maxPatternLen bounds a pattern: it travels in the submission and in every container's token.
const maxPatternLen = 1024

// readLogAggregation reads the [log-aggregation] table; rolledDefault is the job's framework's
// pattern of its rolled files (TableInfo.RolledLogs), used when the table gives no rolled-include.
func (r reader) readLogAggregation(doc map[string]any, rolledDefault string, add func(string, ...any)) LogAggregation {
	t := r.table(doc, "log-aggregation", "log-aggregation")
	var la LogAggregation
	full := make([]string, len(logAggregationKeys))
	for i, k := range logAggregationKeys {
		full[i] = "log-aggregation." + k
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if !slices.Contains(logAggregationKeys, k) {
			add("unknown key %q%s; valid keys of [log-aggregation] are %s", "log-aggregation."+k, didYouMean("log-aggregation."+k, full), strings.Join(logAggregationKeys, ", "))
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"include", &la.Include}, {"exclude", &la.Exclude}, {"rolled-include", &la.RolledInclude}, {"rolled-exclude", &la.RolledExclude}} {
		v, ok := r.str(t, f.key, "log-aggregation."+f.key)
		if !ok {
			continue
		}
		la.Set = true
		if err := checkLogPattern(v); err != "" {
			add("log-aggregation.%s = %q: %s", f.key, bounded(v), err)
			continue
		}
		*f.dst = v
	}
	if _, given := t["rolled-include"]; !given && rolledDefault != "" {
		la.RolledInclude, la.Set = rolledDefault, true
	}
	return la
}

// checkLogPattern says what is wrong with a pattern ("" when nothing). The NodeManager compiles it
// with java.util.regex; yarn-am checks it with Go's RE2, whose syntax is the common subset of the two
// for what file names need (classes, alternation, anchors, repetition): a Java-only construct
// (a lookahead, a back-reference) is refused here rather than failing, unreported, on the nodes.
func checkLogPattern(v string) string {
	switch {
	case len(v) > maxPatternLen:
		return "longer than 1024 bytes"
	case !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\n\r"):
		return "holds a NUL, a line break or invalid UTF-8"
	}
	if _, err := regexp.Compile(v); err != nil {
		return "not a regular expression yarn-am can check (" + strings.TrimPrefix(err.Error(), "error parsing regexp: ") + "); the NodeManager reads it as Java's java.util.regex, checked here in the common subset Go's RE2 reads"
	}
	return ""
}
