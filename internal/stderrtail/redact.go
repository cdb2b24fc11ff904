package stderrtail

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redactor replaces the secrets a process's stderr may quote (the application secret, which a worker's
// and the driver's environment hold; delegation token passwords, as a Hadoop library may print them)
// before its tail is stored and shown (docs/security.md#the-ams-https-api). A secret is matched as
// written and in the encodings a program prints bytes in, alone or inside a longer encoded text: hex
// (any case), base64 (standard and URL-safe, padded or not, the secret at any of the three alignments
// within a longer encoded stream, as in an HTTP Basic header's base64 of "user:secret"), and each of
// these URL-encoded (%2B or %2b for "+", "+" for a space). The zero value and nil redact nothing.
//
// Add is for setting a Redactor up; Redact may then be called from any number of goroutines.
type Redactor struct {
	forms []form
	re    *regexp.Regexp // every form, longest first, each its own group
}

// form is one encoding of one secret: the text it has in the stream (its length orders the
// alternation) and the pattern that matches it as printed.
type form struct {
	text, pattern, label string
}

// minSecret is the shortest form redacted: shorter ones would blank ordinary words.
const minSecret = 8

// Add makes r replace secret, and its encodings, with "[label]".
func (r *Redactor) Add(label string, secret []byte) {
	if len(secret) == 0 {
		return
	}
	with := "[" + label + "]"
	add := func(text, pattern string) {
		if len(text) >= minSecret {
			r.forms = append(r.forms, form{text: text, pattern: pattern, label: with})
		}
	}
	// Hex is per byte: the secret's hex is a substring of any longer hex that holds it.
	h := hex.EncodeToString(secret)
	add(h, "(?i:"+h+")")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(enc.EncodeToString(secret), urlTolerant(enc.EncodeToString(secret)))
		raw := enc.WithPadding(base64.NoPadding)
		for a := range 3 {
			core := base64Core(raw, secret, a)
			add(core, urlTolerant(core))
		}
	}
	if printable(secret) {
		add(string(secret), urlTolerant(string(secret)))
	}
	r.compile()
}

// With is a copy of r (nil: an empty one) that also replaces secret with "[label]" (nothing more when
// secret is empty).
func (r *Redactor) With(label string, secret []byte) *Redactor {
	c := &Redactor{}
	if r != nil {
		c.forms = append(c.forms, r.forms...)
		c.re = r.re
	}
	if len(secret) > 0 {
		c.Add(label, secret)
	}
	return c
}

// base64Core is the part of a longer base64 stream (enc, unpadded) that the secret alone decides when
// it starts a bytes into a group of three: the characters that also carry bits of the bytes before it
// (the first 2 for a = 1, 3 for a = 2) and after it (in its last, partial group) are left out.
func base64Core(enc *base64.Encoding, secret []byte, a int) string {
	n := a + len(secret)
	s := enc.EncodeToString(append(make([]byte, a), secret...))
	end := 4 * (n / 3)
	switch n % 3 {
	case 1:
		end++ // the group's first character is the last byte's top 6 bits
	case 2:
		end += 2 // its first two are the last two bytes' top 12 bits
	}
	skip := [3]int{0, 2, 3}[a]
	if end <= skip {
		return ""
	}
	return s[skip:end]
}

// urlTolerant is a pattern matching s as written or URL-encoded by any encoder: each character that an
// encoder may escape (anything but a letter, a digit and -._~) also as its %XX bytes in either case,
// and a space also as "+".
func urlTolerant(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~", c)) {
			b.WriteByte(byte(c))
			continue
		}
		b.WriteString("(?:" + regexp.QuoteMeta(string(c)) + "|")
		for _, x := range []byte(string(c)) {
			b.WriteString("%(?i:" + fmt.Sprintf("%02x", x) + ")")
		}
		if c == ' ' {
			b.WriteString(`|\+`)
		}
		b.WriteString(")")
	}
	return b.String()
}

// compile builds the one pattern of every form, longest first: where two start at one place (a padded
// base64 form and its unpadded core), the longer is replaced.
func (r *Redactor) compile() {
	sort.SliceStable(r.forms, func(i, j int) bool { return len(r.forms[i].text) > len(r.forms[j].text) })
	alts, literal := make([]string, len(r.forms)), make([]string, len(r.forms))
	for i, f := range r.forms {
		alts[i], literal[i] = "("+f.pattern+")", "("+regexp.QuoteMeta(f.text)+")"
	}
	re, err := regexp.Compile(strings.Join(alts, "|"))
	if err != nil { // not expected (each pattern is built of quoted text): the forms as written, then
		re, _ = regexp.Compile(strings.Join(literal, "|"))
	}
	r.re = re
}

// Redact returns s with every secret added replaced.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.re == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(s[last:m[0]])
		for g := 1; 2*g < len(m); g++ {
			if m[2*g] >= 0 {
				b.WriteString(r.forms[g-1].label)
				break
			}
		}
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func printable(b []byte) bool {
	for _, r := range string(b) {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
