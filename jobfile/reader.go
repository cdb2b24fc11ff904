package jobfile

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/internal/text"
)

// reader reads typed values from the decoded TOML, reporting a value of the wrong type with its key,
// its value and the type wanted.
type reader struct{ add func(string, ...any) }

func (r reader) table(m map[string]any, k, full string) map[string]any {
	v, ok := m[k]
	if !ok {
		return map[string]any{}
	}
	t, ok := v.(map[string]any)
	if _, many := v.([]map[string]any); many {
		r.add("[[%s]] is an array of tables; write [%s] (one table, single brackets)", full, full)
		return map[string]any{}
	}
	if !ok {
		r.add("%s = %s: want a table ([%s] or %s = {...}), not %s", full, show(v), full, full, typeName(v))
		return map[string]any{}
	}
	return t
}

func (r reader) str(m map[string]any, k, full string) (string, bool) {
	v, ok := m[k]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		r.add("%s = %s: want a string (in quotes), not %s", full, show(v), typeName(v))
		return "", false
	}
	return s, true
}

func (r reader) boolean(m map[string]any, k, full string) (bool, bool) {
	v, ok := m[k]
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		r.add("%s = %s: want true or false (without quotes), not %s", full, show(v), typeName(v))
		return false, false
	}
	return b, true
}

func (r reader) strings(m map[string]any, k, full string) []string {
	v, ok := m[k]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.add("%s = %s: want a list of strings, e.g. %s = [%s], not %s", full, show(v), full, show(v), typeName(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for _, it := range list {
		s, ok := it.(string)
		if !ok {
			r.add("%s: %s is %s; want a list of strings", full, show(it), typeName(it))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r reader) integer(m map[string]any, k, full string, lo, hi int64, note string) (int64, bool) {
	v, ok := m[k]
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok || n < lo || n > hi {
		what := ""
		if !ok {
			what = ", not " + typeName(v)
		}
		r.add("%s = %s: want an integer from %d to %d%s%s", full, show(v), lo, hi, what, note)
		return 0, false
	}
	return n, true
}

func (r reader) memory(m map[string]any, k, full string, def int64) int64 {
	v, ok := m[k]
	if !ok {
		return def
	}
	switch t := v.(type) {
	case int64:
		if t <= 0 || t > MaxMemoryMB {
			r.add("%s = %d: want a positive number of MiB up to %d, or a size like \"2g\"", full, t, int64(MaxMemoryMB))
			return def
		}
		return t
	case float64:
		r.add("%s = %s: want a whole number of MiB (e.g. 1536) or a size string (e.g. \"1536m\", \"2g\")", full, show(v))
		return def
	case string:
		mb, err := ParseMemoryMB(t)
		if err != nil {
			r.add("%s: %v", full, err)
			return def
		}
		return mb
	}
	r.add("%s = %s: want a number of MiB or a size like \"2g\", not %s", full, show(v), typeName(v))
	return def
}

// show renders a decoded TOML value as it would be written in TOML.
func show(v any) string {
	switch t := v.(type) {
	case string:
		return text.Quote(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case []any:
		items := make([]string, len(t))
		for i, it := range t {
			items[i] = show(it)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		items := make([]string, 0, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			items = append(items, k+" = "+show(t[k]))
		}
		return "{" + strings.Join(items, ", ") + "}"
	case []map[string]any: // [[name]], an array of tables
		items := make([]string, len(t))
		for i, it := range t {
			items[i] = show(it)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case time.Time:
		return t.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("(a value of type %T)", v) // not a type the TOML decoder produces
}

// typeName names a decoded TOML value's type in the words of the TOML spec.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables ([[...]])"
	}
	return "a date/time"
}
