package jobfile

import "fmt"

// Bounds of a job file's shape, checked before the TOML decoder sees it
// (docs/running.md#limits-on-input-files): the decoder recurses once per nested array or inline table
// (`x = [[[…]]]` two million deep overflows the stack, which no program survives), and copies a key's
// path for every part (a header of 20,000 dotted parts costs gigabytes). A real job file has a few
// dozen keys, nested two or three deep.
const (
	MaxNesting  = 32    // arrays and inline tables inside each other
	MaxKeyParts = 32    // dotted parts of one key or table header
	MaxKeys     = 10000 // keys and table headers in the file
)

// checkShape reads a TOML document as far as its nesting and keys go: strings and comments are
// skipped, table headers and keys are counted with their dotted parts, and '[' and '{' in values are
// counted as they nest. It returns the first bound that is passed, with its line; it does not judge
// the syntax (the decoder does that, once the shape is known to be safe to decode).
func checkShape(data []byte) error {
	var (
		line      = 1
		open      []byte // the '[' and '{' of values that are open
		keyMode   = true // reading a key (or header), not a value
		lineStart = true // only blanks so far on this line
		parts     = 1    // dotted parts of the key being read
		keys      = 0
	)
	newKey := func() { keyMode, parts = true, 1 }
	tooManyParts := func() error {
		return fmt.Errorf("line %d: a key or table header of more than %d dotted parts", line, MaxKeyParts)
	}
	countKey := func() error {
		keys++
		if keys > MaxKeys {
			return fmt.Errorf("line %d: more than %d keys and tables", line, MaxKeys)
		}
		return nil
	}
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n':
			line++
			lineStart = true
			if len(open) == 0 {
				newKey()
			}
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			n, lines := skipString(data[i:])
			i += n
			line += lines
		case keyMode && lineStart && len(open) == 0 && c == '[': // a table header: [a.b] or [[a.b]]
			i++
			if i < len(data) && data[i] == '[' {
				i++
			}
			for i < len(data) && data[i] != ']' && data[i] != '\n' {
				switch data[i] {
				case '"', '\'':
					n, lines := skipString(data[i:])
					i += n
					line += lines
					continue
				case '.':
					if parts++; parts > MaxKeyParts {
						return tooManyParts()
					}
				}
				i++
			}
			if err := countKey(); err != nil {
				return err
			}
			parts = 1
		case keyMode && c == '.':
			if parts++; parts > MaxKeyParts {
				return tooManyParts()
			}
			i++
		case keyMode && c == '=':
			if err := countKey(); err != nil {
				return err
			}
			keyMode = false
			i++
		case keyMode && c == '}': // an empty inline table, or a trailing one
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			keyMode = false
			i++
		case !keyMode && (c == '[' || c == '{'):
			open = append(open, c)
			if len(open) > MaxNesting {
				return fmt.Errorf("line %d: arrays and inline tables nested more than %d deep", line, MaxNesting)
			}
			if c == '{' {
				newKey()
			}
			i++
		case !keyMode && (c == ']' || c == '}'):
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			i++
		case !keyMode && c == ',' && len(open) > 0 && open[len(open)-1] == '{':
			newKey()
			i++
		default:
			i++
		}
		lineStart = false
	}
	return nil
}

// skipString returns the length of the TOML string at the start of s (basic or literal, on one line
// or multi-line between three quotes) and the newlines in it; an unterminated string runs to the end.
func skipString(s []byte) (n, lines int) {
	q := s[0]
	if len(s) >= 3 && s[1] == q && s[2] == q { // multi-line
		for i := 3; i < len(s); i++ {
			switch {
			case s[i] == '\n':
				lines++
			case q == '"' && s[i] == '\\':
				if i+1 < len(s) && s[i+1] == '\n' {
					lines++
				}
				i++
			case s[i] == q && i+2 < len(s) && s[i+1] == q && s[i+2] == q:
				return i + 3, lines
			}
		}
		return len(s), lines
	}
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\n': // a single-line string does not span lines: let the decoder report it
			return i, lines
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			return i + 1, lines
		}
	}
	return len(s), lines
}
