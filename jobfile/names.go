package jobfile

import (
	"errors"
	"regexp"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// This file holds the checks of the names a job gives: its application name, queue and tags.

var (
	nameRe  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	queueRe = regexp.MustCompile(`^[^\s.,:]+(\.[^\s.,:]+)*$`)
)

// ValidateName checks an application name (the job's name, or submit/check --name).
func ValidateName(n string) error {
	if !nameRe.MatchString(n) {
		return errorf("%q: use 1-128 letters, digits, '.', '_' or '-'", n)
	}
	return nil
}

// ValidateQueue checks a queue name (the job's queue, or --queue): a leaf name or a dotted path
// (root.team), without spaces, commas or colons.
func ValidateQueue(q string) error {
	if q == "" {
		return errors.New(`"" is empty; name a leaf queue of the cluster, e.g. default`)
	}
	if !queueRe.MatchString(q) {
		return errorf("%q is not a queue name: use a leaf queue or a dotted path like root.team, without spaces, commas or colons", q)
	}
	return nil
}

// MaxUserTags is how many tags a job may give: YARN takes at most 10 per application
// (ApplicationSubmissionContext) and yarn-am adds its own (contract.ApplicationTag).
const (
	MaxUserTags  = 9
	MaxTagLength = 100
)

// checkTags applies the limits YARN's client applies to application tags (at most 10 per
// application, each at most 100 ASCII characters), counting the tag yarn-am adds.
func checkTags(tags []string, add func(string, ...any)) {
	distinct := map[string]bool{}
	for _, t := range tags {
		switch {
		case t == "" || strings.ContainsAny(t, ",\n"):
			add("tags: %q is not a valid tag (non-empty, no commas or newlines)", t)
		case len(t) > MaxTagLength:
			add("tags: %q is %d characters long; YARN allows at most %d", t, len(t), MaxTagLength)
		case !isASCII(t):
			add("tags: %q has characters that are not ASCII; YARN accepts ASCII tags only", t)
		}
		if strings.ToLower(t) != contract.ApplicationTag {
			distinct[strings.ToLower(t)] = true // YARN lowercases tags
		}
	}
	if len(distinct) > MaxUserTags {
		add("tags: %d tags; give at most %d (YARN allows 10 per application and yarn-am adds its own tag %q)", len(distinct), MaxUserTags, contract.ApplicationTag)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
