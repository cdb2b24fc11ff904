package jobfile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxMemoryMB is the largest memory size a job may ask for: 1 PiB, far above any node, so a larger
// value is a typo.
const MaxMemoryMB = 1 << 30

// ParseMemoryMB parses a memory size: a plain number is MiB; suffixes k, m, g, t (optionally followed
// by "b" or "ib", case-insensitive) are binary units. The result must be a whole number of MiB from 1
// to MaxMemoryMB.
func ParseMemoryMB(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	// "b" and "ib" belong to a unit ("2gb", "2gib"); alone ("512b", "2ib") they are not MiB but bytes
	// or a typo, and reading them as MiB would change the value without a word.
	if u, ok := strings.CutSuffix(t, "ib"); ok {
		t = u
		if !strings.HasSuffix(t, "k") && !strings.HasSuffix(t, "m") && !strings.HasSuffix(t, "g") && !strings.HasSuffix(t, "t") {
			return 0, errorf("%q has no unit before \"ib\": write a number of MiB or a number with a unit k, m, g or t, optionally followed by b or ib (examples: 512, 512m, 2g, 2gib)", s)
		}
	} else if u, ok := strings.CutSuffix(t, "b"); ok {
		t = u
		if !strings.HasSuffix(t, "k") && !strings.HasSuffix(t, "m") && !strings.HasSuffix(t, "g") && !strings.HasSuffix(t, "t") {
			return 0, errorf("%q is not a memory size: yarn-am does not read bytes; write a number of MiB or a number with a unit k, m, g or t, optionally followed by b or ib (examples: 512, 512m, 2g, 2gb)", s)
		}
	}
	mult := float64(1)
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1.0/1024, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		t = strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1024, strings.TrimSuffix(t, "g")
	case strings.HasSuffix(t, "t"):
		mult, t = 1024*1024, strings.TrimSuffix(t, "t")
	}
	t = strings.TrimSpace(t)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil && errors.Is(err, strconv.ErrRange) && v > 0 {
		err = nil // +Inf: too large, reported below
	}
	if err != nil || math.IsNaN(v) || strings.ContainsAny(t, "xXpP_") || strings.EqualFold(strings.TrimLeft(t, "+-"), "inf") || strings.EqualFold(strings.TrimLeft(t, "+-"), "infinity") {
		return 0, errorf("%q is not a memory size: write a number of MiB or a number with a unit k, m, g or t (examples: 512, 512m, 2g)", s)
	}
	if v <= 0 {
		return 0, errorf("%q is not a positive memory size (examples: 512, 512m, 2g)", s)
	}
	mb := v * mult
	if mb > MaxMemoryMB || math.IsInf(mb, 0) {
		return 0, errorf("%q is too large: the maximum is %dg (1 PiB)", s, MaxMemoryMB/1024)
	}
	if mb < 1 {
		return 0, errorf("%q is less than 1 MiB, the smallest size YARN allocates", s)
	}
	if mb != math.Trunc(mb) {
		return 0, errorf("%q is %g MiB: YARN allocates whole MiB; write a whole number of MiB, e.g. %q", s, mb, fmt.Sprintf("%dm", int64(math.Ceil(mb))))
	}
	return int64(mb), nil
}
