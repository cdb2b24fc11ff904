// Package stderrtail keeps the last lines of a process's stderr for diagnostics: the AM keeps its
// driver's (am/driver.go), the launcher its worker's (container/launcher/stderrtail.go). Both end up in
// text that terminals print (YARN's diagnostics, the AM's events), so the kept text is bounded and
// stripped of control characters (docs/running.md#the-workers-own-error), and the secrets the process
// could quote are redacted (Redactor).
package stderrtail

import (
	"strings"
	"sync"
)

// Default bounds: the last lines that fit both.
const (
	DefaultLines = 20
	DefaultBytes = 4 << 10
)

// Tail is an io.Writer that keeps the last Bytes bytes written to it; Lines renders the last Lines
// lines of them. The zero value uses the defaults. Safe for concurrent use.
type Tail struct {
	// MaxLines and MaxBytes bound what is kept; 0 = DefaultLines, DefaultBytes.
	MaxLines, MaxBytes int
	// Redact, when set, replaces the secrets the process could quote before Lines returns them.
	Redact *Redactor

	mu  sync.Mutex
	buf []byte
	n   int64
}

func (t *Tail) maxBytes() int {
	if t.MaxBytes > 0 {
		return t.MaxBytes
	}
	return DefaultBytes
}

// Write keeps the end of p; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	max := t.maxBytes()
	t.n += int64(len(p))
	if len(p) >= max {
		t.buf = append(t.buf[:0], p[len(p)-max:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Written is how many bytes were written in all (kept or not).
func (t *Tail) Written() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Lines returns the last MaxLines complete or partial lines, valid UTF-8, without control characters
// other than newline and tab, trimmed; "" if none. A first line cut by the byte bound is dropped when
// more lines follow, so the text starts at a line's start.
func (t *Tail) Lines() string {
	t.mu.Lock()
	s := string(t.buf)
	cut := t.n > int64(len(t.buf))
	t.mu.Unlock()
	if cut {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = t.Redact.Redact(s)
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f)) {
			return r
		}
		return -1
	}, s)
	max := t.MaxLines
	if max <= 0 {
		max = DefaultLines
	}
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > max {
		ls = ls[len(ls)-max:]
	}
	return strings.TrimSpace(strings.Join(ls, "\n"))
}
