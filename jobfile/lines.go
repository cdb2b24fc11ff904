package jobfile

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/internal/text"
)

// tomlKeyLines finds the line of every key in a TOML document (the TOML library does not expose
// positions). It only needs to be right for documents the library accepted, so it tracks just table
// headers, "key = value" lines, multi-line strings and multi-line arrays/inline tables. Keys are the
// segment paths joined with "\x00".
func tomlKeyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var table []string
	inML := "" // the delimiter of an open multi-line string
	depth := 0 // open [ and { of a value spanning lines
	record := func(segs []string, line int) {
		k := strings.Join(segs, "\x00")
		if _, ok := lines[k]; !ok {
			lines[k] = line
		}
	}
	for i, raw := range strings.Split(string(data), "\n") {
		line := i + 1
		s := raw
		if inML != "" {
			idx := strings.Index(s, inML)
			if idx < 0 {
				continue
			}
			s = s[idx+3:]
			inML = ""
			inML, depth = scanValue(s, depth)
			continue
		}
		if depth > 0 {
			inML, depth = scanValue(s, depth)
			continue
		}
		t := strings.TrimSpace(s)
		if t == "" || t[0] == '#' {
			continue
		}
		if strings.HasPrefix(t, "[[") {
			segs, _ := parseKeyPath(t[2:])
			table = segs
			record(segs, line)
			continue
		}
		if t[0] == '[' {
			segs, _ := parseKeyPath(t[1:])
			table = segs
			record(segs, line)
			continue
		}
		segs, rest := parseKeyPath(t)
		if len(segs) == 0 {
			continue
		}
		full := append(append([]string{}, table...), segs...)
		record(full, line)
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "=") {
			inML, depth = scanValue(rest[1:], 0)
		}
	}
	return lines
}

// keyOnLine names the key whose value is on line of a document the TOML library refused (a value out
// of range, a date that is no date): the last key written on or before that line, which is the key of
// a value spanning lines too. tomlKeyLines reads what comes before the bad line as far as it can. The
// dotted name is cut to a bounded length; "" when no key precedes the line.
func keyOnLine(data []byte, line int) string {
	if line <= 0 {
		return ""
	}
	// Only the lines up to the bad one: what follows does not name its key.
	end := 0
	for n := 1; n <= line && end <= len(data); n++ {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			end = len(data)
			break
		}
		end += i + 1
	}
	best, bestLine := "", 0
	for k, l := range tomlKeyLines(data[:end]) {
		// On one line, the longer path is the key inside the table header's path.
		if l <= line && (l > bestLine || l == bestLine && len(k) > len(best)) {
			best, bestLine = k, l
		}
	}
	if best == "" {
		return ""
	}
	segs := strings.Split(best, "\x00")
	for i, s := range segs {
		if s == "" || strings.IndexFunc(s, func(r rune) bool { return r > 0x7f || !isBare(byte(r)) }) >= 0 {
			segs[i] = strconv.Quote(s)
		}
	}
	return bounded(strings.Join(segs, "."))
}

// parseKeyPath reads a dotted key (bare, "basic" or 'literal' segments) and returns the segments and
// the rest of the line.
func parseKeyPath(s string) ([]string, string) {
	var segs []string
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return segs, ""
		}
		switch s[i] {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return segs, ""
			}
			u, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				u = s[i+1 : j]
			}
			segs = append(segs, u)
			i = j + 1
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return segs, ""
			}
			segs = append(segs, s[i+1:i+1+j])
			i = i + 2 + j
		default:
			j := i
			for j < len(s) && (isBare(s[j])) {
				j++
			}
			if j == i {
				return segs, s[i:]
			}
			segs = append(segs, s[i:j])
			i = j
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] == '.' {
			i++
			continue
		}
		return segs, s[i:]
	}
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// scanValue follows a value to the end of its line and returns an open multi-line string delimiter
// and the bracket depth left open.
func scanValue(s string, depth int) (string, int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '#':
			return "", depth
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			delim := string([]byte{c, c, c})
			if strings.HasPrefix(s[i:], delim) {
				end := strings.Index(s[i+3:], delim)
				if end < 0 {
					return delim, depth
				}
				i += 3 + end + 2
				continue
			}
			j := i + 1
			for j < len(s) && s[j] != c {
				if c == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		}
	}
	return "", depth
}

func absAgainst(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// bounded cuts a value shown in a message to its first 200 bytes, at a character boundary.
func bounded(s string) string {
	if len(s) > 200 {
		return text.Cut(s, 200) + "..."
	}
	return s
}
