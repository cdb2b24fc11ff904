package flinkconf

import (
	"fmt"
	"strings"
)

// parseLegacy reads a flink-conf.yaml as Flink's line reader does (GlobalConfiguration): per line, the
// first '#' starts a comment (even inside a value, as in Flink), the rest is trimmed and split at the
// first ": " into a key and a value, both trimmed and non-empty. It is not YAML: nesting, lists and
// anchors mean nothing to it, and "a: b: c" is the key a with the value "b: c".
//
// Where yarn-am differs from Flink, on purpose:
//   - Flink skips, with a log line, a line it cannot split or with an empty key or value; here each is a
//     *LineError naming the line, because a skipped line is a setting the user asked for and would not
//     get (TestLegacyRefusesWhatFlinkWouldSkip);
//   - one pair of matching quotes around a value is removed. Flink's Java reader keeps them, but its
//     start scripts strip the double quotes of env.java.opts, and a quoted value is a YAML habit whose
//     quotes nobody means as part of the value (TestLegacyQuotes);
//   - a "---" first line (a YAML document start) is skipped; "---" or "..." later is refused.
func parseLegacy(name string, data []byte) ([]Entry, []error) {
	var out []Entry
	var errs []error
	bad := func(line int, text, why string) {
		errs = append(errs, &LineError{File: name, Line: line, Text: text,
			Msg: fmt.Sprintf("%s %s; Flink reads a %s line by line as \"key: value\" (nested YAML only from a file named %s)",
				quote(text), why, LegacyName, YAMLName)})
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
			out = append(out, Entry{Key: k, Value: v, Line: line})
		}
	}
	return out, errs
}
