// Package flinkconf reads Flink's configuration files as Flink reads them, for every part of yarn-am
// that reads one: the external-resource keys (resources.Load), the Flink home's conf/ and the default
// config.yaml inside flink-dist (framework/flink/flinkdist), and through them the client's memory check. One
// reader, so that a file is accepted or refused the same way everywhere (docs/flink.md#configuration).
//
// Flink has two formats, chosen by the file's name:
//   - config.yaml (Flink 1.19+, the only one of Flink 2.x): standard YAML, read here with yaml.v3 and
//     flattened to dotted keys as Flink flattens it (yaml.go);
//   - any other name, in practice the legacy flink-conf.yaml (Flink 1.19 and earlier, and 1.20 without a
//     config.yaml): not YAML at all but Flink's own "key: value" line reader (legacy.go).
//
// Every read is bounded: the file through internal/boundedread (a regular file of at most MaxBytes), and
// the expansion of YAML aliases by a node budget (TestYAMLAliasBombIsRefusedFast).
package flinkconf

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/yarn-am/yarn-am/internal/text"

	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// File names in a Flink conf directory. Flink 1.19+ reads config.yaml when there is one, and the legacy
// flink-conf.yaml only when there is not.
const (
	YAMLName   = "config.yaml"
	LegacyName = "flink-conf.yaml"
)

// MaxBytes is the most read of a Flink configuration (docs/running.md#limits-on-input-files): far above
// any real one (Flink's default config.yaml is 15 KB), so a larger file is a mistake or hostile.
const MaxBytes = 1 << 20

// Entry is one key of a configuration, flattened to Flink's dotted form, with the line it is set on.
type Entry struct {
	Key   string
	Value string // lists in Flink's list form, items joined by ';'
	Line  int
}

// LineError is what cannot be read at one line of a file (Line 0: the file as a whole).
type LineError struct {
	File string
	Line int
	Text string // the line's text where it is the problem (legacy lines), else ""
	Msg  string
}

func (e *LineError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// DuplicateError is a key set twice in one file, flat or nested, which Flink would read as the later
// value without a word: refused, naming both lines, since one of the two settings is a mistake.
type DuplicateError struct {
	File           string
	Key            string
	Line1, Line2   int
	Value1, Value2 string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s is set twice in %s: line %d (%s) and line %d (%s); keep one",
		bounded(e.Key), e.File, e.Line1, quote(e.Value1), e.Line2, quote(e.Value2))
}

// IsYAML reports whether Flink reads the file name as standard YAML (config.yaml) rather than line by
// line. It looks at the last path element only, so "flink-dist.jar!/config.yaml" is YAML too.
func IsYAML(name string) bool { return filepath.Base(name) == YAMLName }

// ReadFile reads and parses a Flink configuration file; see Parse. A path that is not a regular file, or
// is larger than MaxBytes, is refused before it is read (boundedread.ReadFile: its errors name the file).
func ReadFile(path string) ([]Entry, error) {
	data, err := boundedread.ReadFile("flink-conf file", path, "a flink-conf.yaml or config.yaml", MaxBytes)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses the text of a Flink configuration named name (config.yaml as YAML, any other name line
// by line). The error, if any, joins every problem found, each a *LineError or a *DuplicateError
// (errors.Join; Problems lists them); a legacy file's entries that could be read come back with it.
func Parse(name string, data []byte) ([]Entry, error) { return parse(name, data, IsYAML(name)) }

// ParseYAML parses data as a config.yaml whatever its name (the default one inside flink-dist).
func ParseYAML(name string, data []byte) ([]Entry, error) { return parse(name, data, true) }

// ParseLegacy parses data line by line as a flink-conf.yaml whatever its name.
func ParseLegacy(name string, data []byte) ([]Entry, error) { return parse(name, data, false) }

func parse(name string, data []byte, isYAML bool) ([]Entry, error) {
	// A UTF-8 byte order mark (an editor's) is not part of the first key; Flink's reader skips it too.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	var entries []Entry
	var errs []error
	if isYAML {
		var err error
		if entries, err = parseYAML(name, data); err != nil {
			return nil, err
		}
	} else {
		entries, errs = parseLegacy(name, data)
	}
	// Duplicates are refused alike in both formats; the first setting stays in entries.
	seen := map[string]int{}
	out := entries[:0:0]
	for _, e := range entries {
		if i, dup := seen[e.Key]; dup {
			errs = append(errs, &DuplicateError{File: name, Key: e.Key, Line1: out[i].Line, Line2: e.Line, Value1: out[i].Value, Value2: e.Value})
			continue
		}
		seen[e.Key] = len(out)
		out = append(out, e)
	}
	return out, errors.Join(errs...)
}

// Problems splits an error of Parse or ReadFile into its problems, in file order.
func Problems(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// quote Go-quotes a user's text for a message, bounded (internal/text).
func quote(s string) string { return text.Quote(s) }

// bounded is s unquoted, cut as quote cuts it.
func bounded(s string) string {
	if len(s) <= text.MaxQuotedValue {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", text.Cut(s, text.MaxQuotedValue), len(s))
}
