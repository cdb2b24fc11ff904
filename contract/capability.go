package contract

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Capability is a container size, or a node's, by YARN resource name: "memory-mb", "vcores",
// "yarn.io/gpu", ... A name that is absent has the amount 0. It is the one capacity type of the client's
// pre-flight, the AM's asks and allocations and the resources package; Fits, Count and Add are the
// arithmetic they share.
type Capability map[string]int64

// String renders the capability sorted by name: "memory-mb=512 vcores=1 yarn.io/gpu=1".
func (c Capability) String() string {
	parts := make([]string, 0, len(c))
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	return strings.Join(parts, " ")
}

// Fits says whether c holds want: it returns the resource names of which c has less than want asks
// for, sorted, and none when want fits.
func (c Capability) Fits(want Capability) []string {
	var short []string
	for k, w := range want {
		if c[k] < w {
			short = append(short, k)
		}
	}
	slices.Sort(short)
	return short
}

// Count is how many containers of size per c holds at once: the smallest quotient over the resources
// per asks for (0 when per asks for nothing, or c lacks one of them).
func (c Capability) Count(per Capability) int {
	n := -1
	for k, w := range per {
		if w <= 0 {
			continue
		}
		have := c[k]
		if have <= 0 {
			return 0
		}
		if q := int(have / w); n < 0 || q < n {
			n = q
		}
	}
	return max(n, 0)
}

// Add returns a new capability: c plus n times d, for every name of either (n < 0 takes d away:
// c.Add(d, -1) is what is left of c once a container of size d is placed on it).
func (c Capability) Add(d Capability, n int64) Capability {
	out := maps.Clone(c)
	if out == nil {
		out = Capability{}
	}
	for k, v := range d {
		out[k] += n * v
	}
	return out
}
