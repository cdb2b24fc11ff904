package text

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes text another program wrote (the AM, a NodeManager, the ResourceManager, a discovery
// script, the TOML library quoting a file) safe to print on a terminal: escape sequences are removed whole (CSI "ESC [ ... final", OSC "ESC ] ... BEL or ESC \"
// such as OSC 52, which writes the user's clipboard, and two-byte ones), as are C0 controls other
// than newline and tab, DEL and C1 controls (U+0080-U+009F, which include the single-character CSI);
// bytes that are not UTF-8 become U+FFFD. Everything the client prints from those sources goes
// through it at print time (container/client's TestPrintedStringsCannotDriveTheTerminal), and so does
// a message that echoes a program's text (TestSanitizeLeavesNoControlByte).
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == 0x9b: // C1 CSI: a CSI sequence without the ESC
			i += size + csiBodyLen(s[i+size:])
			continue
		case r == 0x9d: // C1 OSC
			i += size + oscBodyLen(s[i+size:])
			continue
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f:
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeLen is the length of the escape sequence at the start of s (s[0] == ESC).
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiBodyLen(s[2:])
	case ']', 'P', '^', '_', 'X': // OSC, DCS, PM, APC: strings up to BEL or ST
		return 2 + oscBodyLen(s[2:])
	}
	return 2
}

// csiBodyLen is the length of a CSI sequence's parameters, intermediates and final byte.
func csiBodyLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		} else if c < 0x20 || c >= 0x7f {
			return i // malformed: stop before the stray byte, which is judged on its own
		}
	}
	return len(s)
}

// oscBodyLen is the length of a control string up to and including its terminator (BEL, ESC \ or
// the C1 ST); unterminated, the rest of s.
func oscBodyLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c: // U+009C ST
			return i + 2
		}
	}
	return len(s)
}
