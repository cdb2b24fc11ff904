package flink

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Config is a flattened Flink configuration: dotted keys (jobmanager.rpc.address) to their values as
// text, in the order they were first set. Lists are held in Flink's own string form for list options,
// items joined by ";" (docs/flink.md#configuration).
type Config struct {
	keys []string
	vals map[string]string
}

// NewConfig returns an empty configuration.
func NewConfig() *Config { return &Config{vals: map[string]string{}} }

// Get returns the value of key and whether it is set.
func (c *Config) Get(key string) (string, bool) {
	v, ok := c.vals[key]
	return v, ok
}

// Set sets key to value, keeping the key's first position.
func (c *Config) Set(key, value string) {
	if _, ok := c.vals[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.vals[key] = value
}

// Delete removes key.
func (c *Config) Delete(key string) {
	if _, ok := c.vals[key]; !ok {
		return
	}
	delete(c.vals, key)
	for i, k := range c.keys {
		if k == key {
			c.keys = append(c.keys[:i], c.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in the order they were first set.
func (c *Config) Keys() []string { return append([]string(nil), c.keys...) }

// Clone returns an independent copy.
func (c *Config) Clone() *Config {
	n := NewConfig()
	for _, k := range c.keys {
		n.Set(k, c.vals[k])
	}
	return n
}

// Merge sets every key of layer over c (a later layer wins, as Flink's -D wins over the file).
func (c *Config) Merge(layer *Config) {
	for _, k := range layer.keys {
		c.Set(k, layer.vals[k])
	}
}

// Limits on what is read: a Flink configuration is a few KiB; these bound a wrong file.
const (
	maxConfigBytes = 4 << 20
	maxValueShown  = 60
)

// shown is a bounded prefix of a value for error messages.
func shown(v string) string {
	if len(v) > maxValueShown {
		return strconv.Quote(v[:maxValueShown]) + "..."
	}
	return strconv.Quote(v)
}

// ApplyDefines sets each "key=value" of defines (the -D flags) over c.
func (c *Config) ApplyDefines(defines []string) error {
	for _, d := range defines {
		k, v, ok := strings.Cut(d, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("flink: -D %s: want key=value", shown(d))
		}
		c.Set(k, strings.TrimSpace(v))
	}
	return nil
}

// Config file names in a Flink conf directory. Flink 1.19+ reads config.yaml (standard YAML); the
// legacy flink-conf.yaml ("key: value" lines) is read when there is no config.yaml.
const (
	ConfigFile       = "config.yaml"
	LegacyConfigFile = "flink-conf.yaml"
)

// LoadConfDir reads the configuration of a Flink conf directory as Flink would: config.yaml, else
// flink-conf.yaml. It returns the file it read; os.ErrNotExist when the directory has neither.
func LoadConfDir(dir string) (*Config, string, error) {
	for _, name := range []string{ConfigFile, LegacyConfigFile} {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("flink: %w", err)
		}
		var c *Config
		if name == ConfigFile {
			c, err = ParseYAML(f, path)
		} else {
			c, err = ParseLegacy(f, path)
		}
		f.Close()
		if err != nil {
			return nil, "", err
		}
		return c, path, nil
	}
	return nil, "", fmt.Errorf("flink: %s has neither %s nor %s: %w", dir, ConfigFile, LegacyConfigFile, os.ErrNotExist)
}

// DefaultConfig reads the config.yaml that flink-dist carries (the binary distribution's
// conf/config.yaml, with among others the JVM options Java 17 needs in env.java.opts.all).
func DefaultConfig(distJar string) (*Config, error) {
	z, err := zip.OpenReader(distJar)
	if err != nil {
		return nil, fmt.Errorf("flink: %w", err)
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != ConfigFile {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("flink: %s!/%s: %w", distJar, ConfigFile, err)
		}
		defer r.Close()
		return ParseYAML(r, distJar+"!/"+ConfigFile)
	}
	return nil, fmt.Errorf("flink: %s carries no %s", distJar, ConfigFile)
}

func readBounded(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("flink: reading %s: %w", name, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("flink: %s is larger than %d bytes", name, maxConfigBytes)
	}
	return data, nil
}

// ParseLegacy reads a legacy flink-conf.yaml: one "key: value" a line, everything after '#' a comment,
// the value taken as written (Flink's legacy reader does not unquote). Unlike Flink, which logs and
// skips a line it cannot split, a line without ": " is an error naming the line.
func ParseLegacy(r io.Reader, name string) (*Config, error) {
	data, err := readBounded(r, name)
	if err != nil {
		return nil, err
	}
	c := NewConfig()
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			if strings.HasSuffix(line, ":") {
				k, v, ok = strings.TrimSuffix(line, ":"), "", true
			}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("flink: %s line %d: %s is not \"key: value\"", name, i+1, shown(line))
		}
		c.Set(k, v)
	}
	return c, nil
}

// yamlLine is one meaningful line of a config.yaml: its indentation and its text without comment.
type yamlLine struct {
	n      int
	indent int
	text   string
}

// ParseYAML reads a Flink config.yaml: the block-style YAML Flink writes and documents, nested
// mappings flattened to dotted keys as Flink flattens them, block and flow sequences of scalars
// turned into Flink's list form "a;b", scalars plain, 'single' or "double" quoted. What Flink's YAML
// parser would accept but this one does not (anchors, aliases, tags, multi-line scalars, flow
// mappings, sequences of mappings) is an error naming the line, never read wrongly.
func ParseYAML(r io.Reader, name string) (*Config, error) {
	data, err := readBounded(r, name)
	if err != nil {
		return nil, err
	}
	var lines []yamlLine
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 64*1024), maxConfigBytes)
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		if strings.HasPrefix(raw, "---") || strings.HasPrefix(raw, "%") {
			if strings.TrimSpace(stripComment(raw)) == "---" {
				continue
			}
			return nil, fmt.Errorf("flink: %s line %d: directives and multiple documents are not supported", name, n)
		}
		text := strings.TrimRight(stripComment(raw), " \t\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		trimmed := strings.TrimLeft(text, " ")
		if strings.HasPrefix(trimmed, "\t") {
			return nil, fmt.Errorf("flink: %s line %d: tabs are not valid YAML indentation", name, n)
		}
		lines = append(lines, yamlLine{n: n, indent: len(text) - len(trimmed), text: trimmed})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("flink: reading %s: %w", name, err)
	}
	p := &yamlParser{name: name, lines: lines, out: NewConfig()}
	if err := p.mapping(0, ""); err != nil {
		return nil, err
	}
	if p.i < len(p.lines) {
		l := p.lines[p.i]
		return nil, fmt.Errorf("flink: %s line %d: unexpected indentation", name, l.n)
	}
	return p.out, nil
}

// stripComment removes a '#' comment that starts the line or follows whitespace, outside quotes.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				if quote == '\'' && i+1 < len(s) && s[i+1] == '\'' {
					i++
				} else {
					quote = 0
				}
			} else if ch == '\\' && quote == '"' {
				i++
			}
		case ch == '\'' || ch == '"':
			if i == 0 || s[i-1] == ' ' || s[i-1] == ':' || s[i-1] == '[' || s[i-1] == ',' || s[i-1] == '-' {
				quote = ch
			}
		case ch == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

type yamlParser struct {
	name  string
	lines []yamlLine
	i     int
	out   *Config
}

func (p *yamlParser) errf(l yamlLine, format string, args ...any) error {
	return fmt.Errorf("flink: %s line %d: %s", p.name, l.n, fmt.Sprintf(format, args...))
}

// mapping reads the block mapping whose keys are indented exactly indent, under prefix.
func (p *yamlParser) mapping(indent int, prefix string) error {
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent < indent {
			return nil
		}
		if l.indent > indent {
			return p.errf(l, "unexpected indentation")
		}
		if strings.HasPrefix(l.text, "- ") || l.text == "-" {
			return p.errf(l, "a sequence where a key was expected")
		}
		key, rest, err := p.splitKey(l)
		if err != nil {
			return err
		}
		full := key
		if prefix != "" {
			full = prefix + "." + key
		}
		p.i++
		if rest != "" {
			v, err := p.scalarOrFlow(l, rest)
			if err != nil {
				return err
			}
			p.out.Set(full, v)
			continue
		}
		// "key:" with nothing after it: a nested mapping, a block sequence, or an empty value.
		if p.i < len(p.lines) {
			next := p.lines[p.i]
			isSeq := strings.HasPrefix(next.text, "- ") || next.text == "-"
			switch {
			case isSeq && next.indent >= indent:
				v, err := p.sequence(next.indent)
				if err != nil {
					return err
				}
				p.out.Set(full, v)
				continue
			case next.indent > indent:
				if err := p.mapping(next.indent, full); err != nil {
					return err
				}
				continue
			}
		}
		p.out.Set(full, "")
	}
	return nil
}

// sequence reads a block sequence of scalars at indent, in Flink's list form.
func (p *yamlParser) sequence(indent int) (string, error) {
	var items []string
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if l.indent != indent || !(strings.HasPrefix(l.text, "- ") || l.text == "-") {
			if l.indent > indent {
				return "", p.errf(l, "sequences of mappings or nested sequences are not supported")
			}
			break
		}
		item := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
		if _, _, err := p.splitKeyQuiet(item); err == nil && !isQuoted(item) {
			return "", p.errf(l, "sequences of mappings are not supported")
		}
		v, err := p.scalar(l, item)
		if err != nil {
			return "", err
		}
		items = append(items, v)
		p.i++
	}
	return joinList(p, items)
}

func joinList(p *yamlParser, items []string) (string, error) {
	for _, it := range items {
		if strings.Contains(it, ";") {
			return "", fmt.Errorf("flink: %s: list item %s contains ';', Flink's list separator", p.name, shown(it))
		}
	}
	return strings.Join(items, ";"), nil
}

func isQuoted(s string) bool { return strings.HasPrefix(s, "'") || strings.HasPrefix(s, "\"") }

// splitKey splits "key: rest" (or "key:"), the key plain or quoted.
func (p *yamlParser) splitKey(l yamlLine) (string, string, error) {
	k, rest, err := p.splitKeyQuiet(l.text)
	if err != nil {
		return "", "", p.errf(l, "%v", err)
	}
	return k, rest, nil
}

func (p *yamlParser) splitKeyQuiet(text string) (string, string, error) {
	if isQuoted(text) {
		end := closingQuote(text)
		if end < 0 {
			return "", "", fmt.Errorf("unterminated quoted key")
		}
		after := text[end+1:]
		if !strings.HasPrefix(after, ":") {
			return "", "", fmt.Errorf("%s is not \"key: value\"", shown(text))
		}
		key, err := unquote(text[:end+1])
		if err != nil {
			return "", "", err
		}
		return key, strings.TrimSpace(after[1:]), nil
	}
	idx := strings.Index(text, ": ")
	if idx < 0 {
		if !strings.HasSuffix(text, ":") {
			return "", "", fmt.Errorf("%s is not \"key: value\"", shown(text))
		}
		idx = len(text) - 1
	}
	key := strings.TrimSpace(text[:idx])
	if key == "" || strings.ContainsAny(key[:1], "&*!|>{[?") {
		return "", "", fmt.Errorf("key %s: anchors, aliases, tags and complex keys are not supported", shown(key))
	}
	return key, strings.TrimSpace(text[idx+1:]), nil
}

// closingQuote returns the index of the quote that closes s's opening quote, or -1.
func closingQuote(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i
		}
	}
	return -1
}

// scalarOrFlow reads a value after "key: ": a flow sequence of scalars or a scalar.
func (p *yamlParser) scalarOrFlow(l yamlLine, v string) (string, error) {
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return "", p.errf(l, "multi-line flow sequences are not supported")
		}
		inner := strings.TrimSpace(v[1 : len(v)-1])
		if inner == "" {
			return "", nil
		}
		var items []string
		for _, part := range splitFlow(inner) {
			s, err := p.scalar(l, strings.TrimSpace(part))
			if err != nil {
				return "", err
			}
			items = append(items, s)
		}
		return joinList(p, items)
	}
	return p.scalar(l, v)
}

// splitFlow splits a flow sequence's inside at commas outside quotes.
func splitFlow(s string) []string {
	var parts []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == '\\' && quote == '"' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// scalar reads one scalar: quoted, or plain (as written; null and ~ are empty).
func (p *yamlParser) scalar(l yamlLine, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch v[0] {
	case '&', '*', '!':
		return "", p.errf(l, "anchors, aliases and tags are not supported: %s", shown(v))
	case '|', '>':
		return "", p.errf(l, "multi-line scalars are not supported: %s", shown(v))
	case '{':
		return "", p.errf(l, "flow mappings are not supported; write Flink's map form k1:v1,k2:v2 as a quoted string: %s", shown(v))
	case '[':
		return "", p.errf(l, "nested sequences are not supported: %s", shown(v))
	case '\'', '"':
		end := closingQuote(v)
		if end != len(v)-1 {
			return "", p.errf(l, "text after the closing quote or no closing quote: %s", shown(v))
		}
		s, err := unquote(v)
		if err != nil {
			return "", p.errf(l, "%v", err)
		}
		return s, nil
	}
	if v == "~" || v == "null" || v == "Null" || v == "NULL" {
		return "", nil
	}
	return v, nil
}

// unquote undoes YAML's single quotes (” is ') or double quotes (the common escapes).
func unquote(s string) (string, error) {
	if s[0] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	}
	var b strings.Builder
	in := s[1 : len(s)-1]
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			b.WriteByte(in[i])
			continue
		}
		i++
		if i >= len(in) {
			return "", fmt.Errorf("a trailing backslash in %s", shown(s))
		}
		switch in[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\', '"', '/':
			b.WriteByte(in[i])
		default:
			return "", fmt.Errorf("escape \\%c in %s is not supported", in[i], shown(s))
		}
	}
	return b.String(), nil
}

// WriteYAML writes c as a config.yaml Flink reads back to the same keys and values: one flat
// "key: 'value'" line a key (Flink flattens dotted keys and nested mappings alike), values single
// quoted so no value is read as YAML syntax. Keys are sorted, so equal configurations give equal files.
func (c *Config) WriteYAML(w io.Writer) error {
	keys := c.Keys()
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# Written by yarn-am (docs/flink.md#configuration): the Flink home's configuration, then the job file's Flink keys, then -D.")
	for _, k := range keys {
		v := c.vals[k]
		if strings.ContainsAny(k, "\n\r") || strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("flink: key %s: a key or value with a line break cannot be written", shown(k))
		}
		fmt.Fprintf(bw, "%s: %s\n", yamlQuote(k), yamlQuote(v))
	}
	return bw.Flush()
}

func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// WriteConfDir writes c as dir/config.yaml (creating dir), replacing the file atomically.
func (c *Config) WriteConfDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".config.yaml.*")
	if err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := c.WriteYAML(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, ConfigFile)); err != nil {
		return fmt.Errorf("flink: %w", err)
	}
	return nil
}
