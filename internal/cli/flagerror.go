package cli

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/yarn-am/yarn-am/internal/text"
)

var (
	reUndefined = regexp.MustCompile(`(?s)^flag provided but not defined: -+(.*)$`)
	reInvalid   = regexp.MustCompile(`(?s)^invalid (boolean )?value (".*") for (?:flag )?-+([^:]+): (.*)$`)
	reNeedsArg  = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// FlagName renders a flag as the usage texts write it: -D, -f, -v, --timeout.
func FlagName(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}

// shownFlag renders a flag name the user typed: as FlagName, or quoted and cut (text.Quote) when it
// is long or holds a control character, so that an escape sequence never reaches the terminal raw.
func shownFlag(n string) string {
	if len(n) > text.MaxQuotedValue || strconv.Quote(n) != `"`+n+`"` {
		return text.Quote(n)
	}
	return FlagName(n)
}

// FlagError rewrites the flag package's errors in the words of the usage texts. A value of the wrong
// form says what the flag takes, from the flag's type in fs: "not true or false" for a boolean flag
// only, "not a whole number" for --tail abc, "needs a unit" for --heartbeat-fast 5
// (TestFlagErrorsSayWhatTheFlagTakes).
func FlagError(fs *flag.FlagSet, err error) error {
	s := err.Error()
	if m := reUndefined.FindStringSubmatch(s); m != nil {
		// The command's own flags, for a did-you-mean (--queu: did you mean "--queue"?).
		var known []string
		if fs != nil {
			fs.VisitAll(func(f *flag.Flag) { known = append(known, FlagName(f.Name)) })
		}
		return fmt.Errorf("unknown flag %s%s", shownFlag(m[1]), text.DidYouMean(FlagName(m[1]), known))
	}
	if m := reInvalid.FindStringSubmatch(s); m != nil {
		boolean, value, name, msg := m[1] != "", m[2], m[3], m[4]
		if raw, err := strconv.Unquote(value); err == nil {
			value = text.Quote(raw) // bounded: a 1 MiB value gives a one-line message
		}
		if msg == "parse error" || msg == "value out of range" {
			msg = wantOf(fs, name, boolean, value, msg == "value out of range")
		}
		return fmt.Errorf("%s %s: %s", FlagName(name), value, msg)
	}
	if m := reNeedsArg.FindStringSubmatch(s); m != nil {
		return fmt.Errorf("%s needs a value", FlagName(m[1]))
	}
	return err
}

// wantOf says what a flag of the standard library's types takes, for a value it could not parse
// (quoted: the value as the flag package quoted it).
func wantOf(fs *flag.FlagSet, name string, boolean bool, quoted string, outOfRange bool) string {
	if boolean {
		return "not true or false"
	}
	var v any
	if fs != nil {
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				v = g.Get()
			}
		}
	}
	raw, _ := strconv.Unquote(quoted)
	switch v.(type) {
	case bool:
		return "not true or false"
	case int, int64:
		if outOfRange {
			return "out of range for a whole number"
		}
		return "not a whole number"
	case uint, uint64:
		if outOfRange {
			return "out of range for a whole number"
		}
		return "not a whole number of 0 or more"
	case float64:
		return "not a number"
	case time.Duration:
		if _, err := strconv.ParseFloat(raw, 64); err == nil {
			return fmt.Sprintf("needs a unit, e.g. %sms or %ss", raw, raw)
		}
		return "not a duration; write a number with a unit, e.g. 200ms, 5s, 2m"
	}
	if outOfRange {
		return "out of range"
	}
	return "not a value this flag takes"
}
