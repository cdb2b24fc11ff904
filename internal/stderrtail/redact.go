package stderrtail

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
)

// Redactor replaces the secrets a process's stderr may quote (the application secret, which a worker's
// and the driver's environment hold; delegation token passwords, as a Hadoop library may print them)
// before its tail is stored and shown (docs/security.md#the-ams-https-api). A secret is matched as
// written and in the encodings a program prints bytes in: hex and base64 (standard and URL-safe, with
// and without padding). The zero value and nil redact nothing.
type Redactor struct {
	find []string
	with []string
}

// minSecret is the shortest value redacted: shorter ones would blank ordinary words.
const minSecret = 8

// Add makes r replace secret, and its encodings, with "[label]".
func (r *Redactor) Add(label string, secret []byte) {
	if len(secret) == 0 {
		return
	}
	forms := []string{hex.EncodeToString(secret), strings.ToUpper(hex.EncodeToString(secret)),
		base64.StdEncoding.EncodeToString(secret), base64.RawStdEncoding.EncodeToString(secret),
		base64.URLEncoding.EncodeToString(secret), base64.RawURLEncoding.EncodeToString(secret)}
	if printable(secret) {
		forms = append(forms, string(secret))
	}
	for _, f := range forms {
		if len(f) >= minSecret {
			r.find, r.with = append(r.find, f), append(r.with, "["+label+"]")
		}
	}
}

// Redact returns s with every secret added replaced, longest forms first (a padded base64 form
// before the unpadded one it contains).
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	order := make([]int, len(r.find))
	for i := range order {
		order[i] = i
	}
	for i := 1; i < len(order); i++ { // few entries: insertion sort by length, longest first
		for j := i; j > 0 && len(r.find[order[j]]) > len(r.find[order[j-1]]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, i := range order {
		s = strings.ReplaceAll(s, r.find[i], r.with[i])
	}
	return s
}

func printable(b []byte) bool {
	for _, r := range string(b) {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
