package flinkconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Bounds of flattening a config.yaml (TestYAMLAliasBombIsRefusedFast, TestYAMLAliasCycle). yaml.v3's
// own alias protection works when it decodes into Go values; a yaml.Node keeps each alias as a pointer
// to its anchor, unexpanded, so the walk below is what expands them and what must be bounded. No real
// configuration comes near these numbers (Flink's default config.yaml flattens to 10 keys).
const (
	// maxCollectionAliases is Flink's own bound: its YAML reader (SnakeYAML, whose LoaderOptions Flink
	// leaves at their defaults) refuses a document with more than 50 aliases of mappings or lists.
	maxCollectionAliases = 50
	// maxNodes bounds the nodes visited while aliases are expanded: 50 aliases nested in each other
	// are enough for 2^50 of them, far past Flink's own bound.
	maxNodes   = 100000
	maxDepth   = 32
	maxEntries = 10000
	maxKeyLen  = 1024
)

// parseYAML reads a config.yaml as Flink 1.19+ does (its GlobalConfiguration with the standard YAML
// parser): one YAML document whose top level is a mapping; nested mappings, block or flow, flatten to
// dotted keys ("env: {java: {opts: {all: x}}}" is env.java.opts.all; a map-typed option written as a
// mapping becomes the prefix keys Flink reads it back from); a list of scalars becomes Flink's list
// form "a;b"; a scalar is its text, unquoted ('it”s' is it's), and null or ~ is "". Anchors, aliases
// and merge keys (<<: *base) work as in Flink's reader (SnakeYAML supports all three): an alias is the
// anchored node again, and a merge key adds the merged mappings' keys the mapping does not set itself,
// an earlier merged mapping winning over a later one (TestYAMLAnchorsAndMergeKeys).
//
// Refused, naming the line: a second document (Flink reads one), a list of lists or of mappings
// (Flink's lists are flat: an item would be lost), a key that is not a scalar, a custom tag (!x: Flink
// would try to construct a Java class of that name), and the bounds above.
//
// Not reproduced: SnakeYAML reads YAML 1.1, where a plain on, yes or 0x10 is a boolean or a number and
// Flink's configuration holds that value (true, 16); here every scalar stays the text written, which is
// what the old flat flink-conf.yaml gave for the same line.
func parseYAML(name string, data []byte) ([]Entry, error) {
	lineErr := func(line int, format string, args ...any) error {
		return &LineError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(name, data, err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		line := second.Line
		if len(second.Content) > 0 {
			line = second.Content[0].Line
		}
		return nil, lineErr(line, "a second YAML document (after '---'); Flink reads only the first: merge them into one")
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(name, data, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, lineErr(root.Line, "the document is not a mapping of keys to values (key: value)")
	}
	if err := countAliases(name, root); err != nil {
		return nil, err
	}
	f := &flattener{name: name, open: map[*yaml.Node]bool{}}
	f.mapping("", root, 0)
	if f.err != nil {
		return nil, f.err
	}
	return f.out, nil
}

var (
	yamlLineRe      = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownAnchorRe = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)
)

// syntaxError is yaml.v3's error as a *LineError naming the file and line, in our words where the
// parser has words of its own only.
func syntaxError(name string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = yamlWords(data, line, m[2])
	} else if m := unknownAnchorRe.FindStringSubmatch(msg); m != nil {
		// yaml.v3 names no line here: the first line that uses the alias is the one to fix.
		for i, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, "*"+m[1]) {
				line = i + 1
				break
			}
		}
		msg = fmt.Sprintf("the alias *%s names no anchor (&%s) above it", bounded(m[1]), bounded(m[1]))
	}
	return &LineError{File: name, Line: line, Msg: fmt.Sprintf("%s; a %s is read as YAML, as Flink 1.19+ reads it", msg, YAMLName)}
}

// yamlWords puts the YAML parser's message about line (1-based) in our words where it has words of its
// own only: a tab in the indentation is "found character that cannot start any token".
func yamlWords(data []byte, n int, msg string) string {
	if !strings.Contains(msg, "cannot start any token") {
		return msg
	}
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		return msg
	}
	text := lines[n-1]
	if indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]; strings.Contains(indent, "\t") {
		return "the line is indented with a tab; YAML indents with spaces only: replace the tab by spaces"
	}
	if strings.Contains(strings.TrimSpace(text), "\t") {
		return "the line has a tab where YAML expects a value; use spaces"
	}
	return msg
}

// countAliases refuses, as Flink's reader does, a document with more than maxCollectionAliases aliases
// of mappings or lists. The walk goes over the document as written (aliases not followed), so it is
// linear in the file.
func countAliases(name string, root *yaml.Node) error {
	n := 0
	var walk func(*yaml.Node) error
	walk = func(x *yaml.Node) error {
		if x.Kind == yaml.AliasNode {
			if x.Alias != nil && x.Alias.Kind != yaml.ScalarNode {
				if n++; n > maxCollectionAliases {
					return &LineError{File: name, Line: x.Line, Msg: fmt.Sprintf("more than %d aliases of mappings or lists (*%s); Flink's YAML reader refuses such a document too (aliases repeated inside aliases?)",
						maxCollectionAliases, bounded(x.Value))}
				}
			}
			return nil
		}
		for _, c := range x.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// flattener walks a document's mappings into dotted entries, following aliases and merge keys, within
// the bounds above. The first problem stops it (err).
type flattener struct {
	name  string
	out   []Entry
	err   error
	nodes int
	open  map[*yaml.Node]bool // mappings being walked: an alias back to one of them is a cycle
	// top is the top-level key being flattened and its line: where an expansion past the bounds is
	// written (its aliases' anchors may be anywhere above).
	top     string
	topLine int
}

func (f *flattener) fail(line int, format string, args ...any) {
	if f.err == nil {
		f.err = &LineError{File: f.name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
}

// visit counts a node against the budget; false once it is spent.
func (f *flattener) visit(line int) bool {
	if f.nodes++; f.nodes > maxNodes && f.err == nil {
		f.fail(f.topLine, "key %q: expanding its aliases visits more than %d nodes (aliases repeated inside aliases?); a real configuration is far smaller", bounded(f.top), maxNodes)
	}
	return f.err == nil
}

func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// mapping flattens the mapping n under prefix.
func (f *flattener) mapping(prefix string, n *yaml.Node, depth int) {
	f.open[n] = true
	defer delete(f.open, n)
	start := len(f.out)
	var merges []*yaml.Node // the values of merge keys, applied after the mapping's own keys
	for i := 0; i+1 < len(n.Content) && f.err == nil; i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if !f.visit(k.Line) {
			return
		}
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k = deref(k); k.Kind != yaml.ScalarNode {
			f.fail(k.Line, "a key that is a mapping or a list; Flink's keys are text")
			return
		}
		key := k.Value
		if prefix != "" {
			key = prefix + "." + key
		}
		if depth == 0 {
			f.top, f.topLine = key, k.Line
		}
		if len(f.out) >= maxEntries || len(key) > maxKeyLen {
			f.fail(f.topLine, "key %q: flattening gives more than %d keys or a key longer than %d bytes (aliases repeated inside aliases?)", bounded(f.top), maxEntries, maxKeyLen)
			return
		}
		if isCustomTag(v.Tag) {
			f.fail(v.Line, "key %q: the tag %s is not standard YAML; Flink's reader would look for a Java class of that name: remove it", bounded(key), bounded(v.Tag))
			return
		}
		switch v.Kind {
		case yaml.MappingNode:
			switch {
			case f.open[v]:
				f.fail(k.Line, "key %q is an alias of a mapping that contains it (an alias cycle)", bounded(key))
			case depth >= maxDepth:
				f.fail(k.Line, "key %q is nested more than %d levels deep", bounded(key), maxDepth)
			default:
				f.mapping(key, v, depth+1)
			}
		case yaml.SequenceNode:
			items := make([]string, 0, len(v.Content))
			for _, it := range v.Content {
				if it = deref(it); !f.visit(it.Line) {
					return
				}
				if it.Kind != yaml.ScalarNode {
					// Flink's list is flat: [gpu, [fpga]] would silently lose fpga.
					f.fail(it.Line, "key %q: a list item is itself a list or a mapping; give a flat list of values, e.g. [gpu, fpga]", bounded(key))
					return
				}
				if strings.Contains(it.Value, ";") {
					// Flink's list form joins items with ';': "x;y" would come back as two items.
					f.fail(it.Line, "key %q: list item %s contains ';', the separator of Flink's lists; give it as two items or as one quoted value outside a list", bounded(key), quote(it.Value))
					return
				}
				items = append(items, scalar(it))
			}
			f.out = append(f.out, Entry{Key: key, Value: strings.Join(items, ";"), Line: k.Line})
		default:
			f.out = append(f.out, Entry{Key: key, Value: scalar(v), Line: k.Line})
		}
	}
	if len(merges) > 0 && f.err == nil {
		f.merge(prefix, n, depth, start, merges)
	}
}

// merge applies merge keys as Flink's YAML reader does (the YAML merge key rule): the merged mappings'
// keys, unless the mapping sets them itself or an earlier merged mapping did.
func (f *flattener) merge(prefix string, n *yaml.Node, depth, start int, merges []*yaml.Node) {
	have := map[string]bool{}
	for _, e := range f.out[start:] {
		have[e.Key] = true
	}
	for _, m := range merges {
		targets := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			targets = m.Content
		}
		for _, t := range targets {
			t = deref(t)
			switch {
			case t.Kind != yaml.MappingNode:
				f.fail(t.Line, "the merge key << takes a mapping (<<: *base) or a list of them")
			case f.open[t]:
				f.fail(t.Line, "a merge key merges a mapping that contains it (an alias cycle)")
			case depth >= maxDepth:
				f.fail(t.Line, "merge keys nested more than %d levels deep", maxDepth)
			}
			if f.err != nil {
				return
			}
			saved := f.out
			f.out = nil
			f.mapping(prefix, t, depth+1)
			got := f.out
			f.out = saved
			if f.err != nil {
				return
			}
			for _, e := range got {
				if !have[e.Key] {
					have[e.Key] = true
					f.out = append(f.out, e)
				}
			}
			if len(f.out) > maxEntries {
				f.fail(t.Line, "flattening merge keys gives more than %d keys (merges repeated inside merges?)", maxEntries)
				return
			}
		}
	}
}

// scalar is a scalar's value as Flink's configuration holds it in text: null is "".
func scalar(n *yaml.Node) string {
	if n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// isCustomTag: yaml.v3 spells the standard tags !!str, !!int, ... (and "!" for a non-specific one).
func isCustomTag(tag string) bool {
	return strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!") && tag != "!"
}
