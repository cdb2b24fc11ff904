package flinkdist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file checks, before anything is staged, that Flink's memory configuration fits a process of the
// container's size, deriving the components as Flink's calculator does (docs/flink.md#the-memory-check):
// the facts are Flink 1.20's memory model (TaskExecutorProcessUtils, JobManagerProcessUtils and their
// defaults), and TestCheckMemoryAgreesWithBashJavaUtils compares the result with Flink's own
// calculator at boundary sizes.

// Flink's memory keys this check reads (the process sizes are keyTMProcessSize and keyJMProcessSize,
// which yarn-am sets to the container's memory).
const (
	keyTMFlinkSize        = "taskmanager.memory.flink.size"
	keyTMFrameworkHeap    = "taskmanager.memory.framework.heap.size"
	keyTMTaskHeap         = "taskmanager.memory.task.heap.size"
	keyTMFrameworkOffHeap = "taskmanager.memory.framework.off-heap.size"
	keyTMTaskOffHeap      = "taskmanager.memory.task.off-heap.size"
	keyTMManaged          = "taskmanager.memory.managed.size"
	keyTMManagedFraction  = "taskmanager.memory.managed.fraction"
	keyTMNetworkMin       = "taskmanager.memory.network.min"
	keyTMNetworkMax       = "taskmanager.memory.network.max"
	keyTMNetworkFraction  = "taskmanager.memory.network.fraction"
	keyJMFlinkSize        = "jobmanager.memory.flink.size"
	keyJMHeap             = "jobmanager.memory.heap.size"
	keyJMOffHeap          = "jobmanager.memory.off-heap.size"
)

// memoryDeprecatedKeys are the deprecated names that Flink 1.20 and 2.x still read for a memory key
// when the key itself is not set (their TaskManagerOptions declare them; Flink 2.0's release notes
// list the network ones as removed, yet 2.3 reads them): TestCheckMemoryAgreesWithBashJavaUtils runs
// them against both versions' calculators.
var memoryDeprecatedKeys = map[string][]string{
	keyTMManaged:         {"taskmanager.memory.size"},
	keyTMNetworkMin:      {"taskmanager.network.memory.min"},
	keyTMNetworkMax:      {"taskmanager.network.memory.max"},
	keyTMNetworkFraction: {"taskmanager.network.memory.fraction"},
}

const mib = int64(1) << 20

// memParam is one size of the memory model: its key, value in bytes, whether it is configured, and
// the text it was configured as.
type memParam struct {
	key  string
	val  int64
	set  bool
	text string
}

// memParams are a role's memory options as read from a configuration, with Flink's defaults.
type memParams struct {
	role                                              Role
	flink, heap, offHeap, taskHeap, frameworkOffHeap  memParam // JobManager: heap, offHeap; TaskManager: heap = framework heap
	taskOffHeap, managed, netMin, netMax, meta, ovMin memParam
	ovMax                                             memParam
	managedFrac, netFrac, ovFrac                      float64
}

func readMemParams(c *Config, role Role) (*memParams, error) {
	var errs []string
	// A size is read from its key, else from the deprecated names Flink still reads for it (in both
	// 1.20 and 2.x: memoryDeprecatedKeys), the message then naming the one set.
	size := func(key string, def int64) memParam {
		p := memParam{key: key, val: def}
		v, ok := c.Get(key)
		for _, old := range memoryDeprecatedKeys[key] {
			if !ok {
				key = old
				v, ok = c.Get(old)
			}
		}
		if !ok {
			return p
		}
		n, err := parseMemorySize(v)
		if err != nil {
			errs = append(errs, key+": "+err.Error())
			return p
		}
		return memParam{key: key, val: n, set: true, text: v}
	}
	// Flink's fractions are Java floats: 0.4 is 0.4000000059604645, which shows in the derived bytes.
	frac := func(key string, def float32) float64 {
		v, ok := c.Get(key)
		for _, old := range memoryDeprecatedKeys[key] {
			if !ok {
				key = old
				v, ok = c.Get(old)
			}
		}
		if !ok {
			return float64(def)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 32)
		if err != nil || f < 0 || f >= 1 {
			errs = append(errs, fmt.Sprintf("%s = %s: want a fraction from 0 to below 1", key, shown(v)))
			return float64(def)
		}
		return float64(float32(f))
	}
	p := &memParams{role: role}
	if role == RoleTaskManager {
		p.flink = size(keyTMFlinkSize, -1)
		p.heap = size(keyTMFrameworkHeap, 128*mib)
		p.taskHeap = size(keyTMTaskHeap, -1)
		p.frameworkOffHeap = size(keyTMFrameworkOffHeap, 128*mib)
		p.taskOffHeap = size(keyTMTaskOffHeap, 0)
		p.managed = size(keyTMManaged, -1)
		p.netMin = size(keyTMNetworkMin, 64*mib)
		p.netMax = size(keyTMNetworkMax, math.MaxInt64)
		p.meta = size("taskmanager.memory.jvm-metaspace.size", 256*mib)
		p.ovMin = size("taskmanager.memory.jvm-overhead.min", 192*mib)
		p.ovMax = size("taskmanager.memory.jvm-overhead.max", 1024*mib)
		p.managedFrac = frac(keyTMManagedFraction, 0.4)
		p.netFrac = frac(keyTMNetworkFraction, 0.1)
		p.ovFrac = frac("taskmanager.memory.jvm-overhead.fraction", 0.1)
	} else {
		p.flink = size(keyJMFlinkSize, -1)
		p.heap = size(keyJMHeap, -1)
		p.offHeap = size(keyJMOffHeap, 128*mib)
		p.meta = size("jobmanager.memory.jvm-metaspace.size", 256*mib)
		p.ovMin = size("jobmanager.memory.jvm-overhead.min", 192*mib)
		p.ovMax = size("jobmanager.memory.jvm-overhead.max", 1024*mib)
		p.ovFrac = frac("jobmanager.memory.jvm-overhead.fraction", 0.1)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("flink: %s", strings.Join(errs, "; "))
	}
	return p, nil
}

// explicit lists the component sizes the configuration sets (the keys a message can name).
func (p *memParams) explicit() []*memParam {
	var out []*memParam
	for _, q := range []*memParam{&p.flink, &p.heap, &p.taskHeap, &p.offHeap, &p.frameworkOffHeap, &p.taskOffHeap, &p.managed, &p.netMin, &p.meta, &p.ovMin} {
		if q.set && q.key != "" {
			out = append(out, q)
		}
	}
	return out
}

func mibText(n int64) string {
	if n%mib == 0 {
		return fmt.Sprintf("%d MiB", n/mib)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/float64(mib))
}

// named renders a size with its key when the configuration sets it, else as Flink's default.
func (q memParam) named(what string) string {
	if q.set {
		return fmt.Sprintf("%s (%s = %s)", what, q.key, shown(q.text))
	}
	return fmt.Sprintf("%s (%s, Flink's default)", what, mibText(q.val))
}

func mulFrac(n int64, f float64) int64 { return int64(float64(n) * f) }

func clamp(n, lo, hi int64) int64 { return max(lo, min(n, hi)) }

// memorySizes are the derived components of a process, in bytes.
type memorySizes struct {
	Flink, Heap, TaskHeap, OffHeap, Managed, Network, Metaspace, Overhead int64
}

// derive sizes a process of process bytes as Flink would, or says why Flink would refuse it.
func (p *memParams) derive(process int64) (memorySizes, error) {
	s := memorySizes{Metaspace: p.meta.val}
	// Flink refuses a range whose minimum is above its maximum whatever the sizes (its RangeFraction).
	for _, r := range [][2]memParam{{p.ovMin, p.ovMax}, {p.netMin, p.netMax}} {
		if r[0].key != "" && r[0].val > r[1].val {
			return s, fmt.Errorf("%s is above %s; Flink wants the minimum at most the maximum", r[0].named("the minimum"), r[1].named("the maximum"))
		}
	}
	checkOverhead := func() error {
		s.Overhead = process - s.Flink - s.Metaspace
		if s.Overhead < 0 {
			return fmt.Errorf("the total Flink memory (%s) and the JVM metaspace (%s) exceed the process size (%s)", mibText(s.Flink), mibText(s.Metaspace), mibText(process))
		}
		if s.Overhead < p.ovMin.val || s.Overhead > p.ovMax.val {
			return fmt.Errorf("the JVM overhead left (%s: the process size %s less the total Flink memory %s and the JVM metaspace %s) is outside Flink's range for it, %s to %s",
				mibText(s.Overhead), mibText(process), mibText(s.Flink), mibText(s.Metaspace), mibText(p.ovMin.val), mibText(p.ovMax.val))
		}
		return nil
	}
	fromProcess := func() error {
		s.Overhead = clamp(mulFrac(process, p.ovFrac), p.ovMin.val, p.ovMax.val)
		s.Flink = process - s.Metaspace - s.Overhead
		if s.Flink <= 0 {
			return fmt.Errorf("the JVM metaspace (%s) and the JVM overhead (%s) take the whole process size (%s)", mibText(s.Metaspace), mibText(s.Overhead), mibText(process))
		}
		return nil
	}
	if p.role != RoleTaskManager {
		s.OffHeap = p.offHeap.val
		switch {
		case p.heap.set:
			s.Heap = p.heap.val
			if p.flink.set {
				if s.Heap > p.flink.val {
					return s, fmt.Errorf("%s is larger than %s", p.heap.named("the JVM heap"), p.flink.named("the total Flink memory"))
				}
				if !p.offHeap.set {
					s.OffHeap = p.flink.val - s.Heap
				} else if s.Heap+s.OffHeap != p.flink.val {
					return s, fmt.Errorf("%s and %s do not add up to %s", p.heap.named("the JVM heap"), p.offHeap.named("the off-heap memory"), p.flink.named("the total Flink memory"))
				}
			}
			s.Flink = s.Heap + s.OffHeap
			if err := checkOverhead(); err != nil {
				return s, fmt.Errorf("%s and %s: %w", p.heap.named("the JVM heap"), p.offHeap.named("the off-heap memory"), err)
			}
			return s, nil
		case p.flink.set:
			s.Flink = p.flink.val
			if err := checkOverhead(); err != nil {
				return s, fmt.Errorf("%s: %w", p.flink.named("the total Flink memory"), err)
			}
		default:
			if err := fromProcess(); err != nil {
				return s, err
			}
		}
		if s.OffHeap >= s.Flink {
			return s, fmt.Errorf("%s leaves no JVM heap in the total Flink memory (%s)", p.offHeap.named("the off-heap memory"), mibText(s.Flink))
		}
		s.Heap = s.Flink - s.OffHeap
		return s, nil
	}

	// A TaskManager.
	s.Heap = p.heap.val
	fixed := p.heap.val + p.frameworkOffHeap.val + p.taskOffHeap.val
	s.OffHeap = p.frameworkOffHeap.val + p.taskOffHeap.val
	parts := func() string {
		return fmt.Sprintf("%s, %s, %s, %s and the network memory (%s)", p.heap.named("the framework heap"), p.frameworkOffHeap.named("the framework off-heap"),
			p.taskOffHeap.named("the task off-heap"), p.managed.namedOr("the managed memory", s.Managed), mibText(s.Network))
	}
	internal := func() error {
		s.Managed = p.managed.val
		if !p.managed.set {
			s.Managed = mulFrac(s.Flink, p.managedFrac)
		}
		if p.taskHeap.set {
			s.TaskHeap = p.taskHeap.val
			s.Network = s.Flink - fixed - s.TaskHeap - s.Managed
			if s.Network < 0 {
				return fmt.Errorf("%s, %s and %s exceed the total Flink memory (%s)", p.taskHeap.named("the task heap"),
					p.managed.namedOr("the managed memory", s.Managed), p.heap.named("the framework heap")+" and the off-heap sizes", mibText(s.Flink))
			}
			if s.Network < p.netMin.val || s.Network > p.netMax.val {
				return fmt.Errorf("the network memory left (%s) is outside its range, %s to %s", mibText(s.Network), mibText(p.netMin.val), mibText(p.netMax.val))
			}
			return nil
		}
		s.Network = clamp(mulFrac(s.Flink, p.netFrac), p.netMin.val, p.netMax.val)
		s.TaskHeap = s.Flink - fixed - s.Managed - s.Network
		if s.TaskHeap < 0 {
			return fmt.Errorf("%s exceed the total Flink memory (%s), leaving no task heap", parts(), mibText(s.Flink))
		}
		return nil
	}
	switch {
	case p.taskHeap.set && p.managed.set:
		s.TaskHeap, s.Managed = p.taskHeap.val, p.managed.val
		exclude := fixed + s.TaskHeap + s.Managed
		if p.flink.set {
			s.Flink = p.flink.val
			s.Network = s.Flink - exclude
			if s.Network < p.netMin.val || s.Network > p.netMax.val {
				return s, fmt.Errorf("%s and %s leave %s of %s for the network memory, outside its range %s to %s",
					p.taskHeap.named("the task heap"), p.managed.named("the managed memory"), mibText(s.Network), p.flink.named("the total Flink memory"), mibText(p.netMin.val), mibText(p.netMax.val))
			}
		} else {
			s.Network = clamp(int64(float64(exclude)*p.netFrac/(1-p.netFrac)), p.netMin.val, p.netMax.val)
			s.Flink = exclude + s.Network
		}
		if err := checkOverhead(); err != nil {
			return s, fmt.Errorf("%s and %s: %w", p.taskHeap.named("the task heap"), p.managed.named("the managed memory"), err)
		}
		return s, nil
	case p.flink.set:
		s.Flink = p.flink.val
		if err := internal(); err != nil {
			return s, err
		}
		if err := checkOverhead(); err != nil {
			return s, fmt.Errorf("%s: %w", p.flink.named("the total Flink memory"), err)
		}
		return s, nil
	default:
		if err := fromProcess(); err != nil {
			return s, err
		}
		return s, internal()
	}
}

// namedOr is named for a size the configuration may leave to a fraction (derived: its value then).
func (q memParam) namedOr(what string, derived int64) string {
	if q.set {
		return q.named(what)
	}
	return fmt.Sprintf("%s (%s, derived)", what, mibText(derived))
}

// maxSearchMiB bounds the searches for sizes that fit (1 TiB).
const maxSearchMiB = 1 << 20

// MemoryError says why Flink's memory configuration cannot fit a process of ProcessMiB, and what would.
type MemoryError struct {
	Role       Role
	ProcessMiB int64
	Reason     string
	// FitFromMiB..FitToMiB is the range of process sizes that fit this configuration (0, 0: none up
	// to 1 TiB).
	FitFromMiB, FitToMiB int64
	// Key, KeyValue, KeyFromMiB, KeyToMiB: the first explicitly configured size with a range of values
	// that fit at ProcessMiB ("" when none).
	Key, KeyValue        string
	KeyFromMiB, KeyToMiB int64
}

func (e *MemoryError) Error() string {
	who := "a TaskManager"
	if e.Role != RoleTaskManager {
		who = "a JobManager"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "flink: %s of process size %d MiB does not fit Flink's memory configuration: %s", who, e.ProcessMiB, e.Reason)
	if e.Key != "" {
		fmt.Fprintf(&b, "; at %d MiB, %s (now %s) fits from %d to %d MiB", e.ProcessMiB, e.Key, shown(e.KeyValue), e.KeyFromMiB, e.KeyToMiB)
	}
	switch {
	case e.FitFromMiB == 0:
		fmt.Fprintf(&b, "; no process size up to %d MiB fits this configuration", maxSearchMiB)
	case e.FitToMiB >= maxSearchMiB:
		fmt.Fprintf(&b, "; a process size of at least %d MiB fits it", e.FitFromMiB)
	default:
		fmt.Fprintf(&b, "; a process size from %d to %d MiB fits it", e.FitFromMiB, e.FitToMiB)
	}
	return b.String()
}

// CheckMemory checks that Flink's memory configuration c fits a role's process of processMiB (the
// container's memory, which yarn-am makes the process size) as Flink's calculator would size it. The
// error is a *MemoryError naming why, which process sizes fit, and the range of an explicitly
// configured size that fits; a malformed size or fraction is an error naming its key.
func CheckMemory(c *Config, role Role, processMiB int64) error {
	p, err := readMemParams(c, role)
	if err != nil {
		return err
	}
	_, derr := p.derive(processMiB * mib)
	if derr == nil {
		return nil
	}
	e := &MemoryError{Role: role, ProcessMiB: processMiB, Reason: derr.Error()}
	e.FitFromMiB, e.FitToMiB = fitRange(func(n int64) bool { _, err := p.derive(n * mib); return err == nil }, maxSearchMiB)
	for _, q := range p.explicit() {
		saved := q.val
		from, to := fitRange(func(n int64) bool {
			q.val = n * mib
			_, err := p.derive(processMiB * mib)
			return err == nil
		}, processMiB)
		q.val = saved
		if from > 0 {
			e.Key, e.KeyValue, e.KeyFromMiB, e.KeyToMiB = q.key, q.text, from, to
			break
		}
	}
	return e
}

// fitRange returns the first run of sizes 1..limit MiB for which fits holds (0, 0: none).
func fitRange(fits func(int64) bool, limit int64) (int64, int64) {
	from := int64(0)
	for n := int64(1); n <= limit; n++ {
		ok := fits(n)
		switch {
		case ok && from == 0:
			from = n
		case !ok && from > 0:
			return from, n - 1
		}
	}
	return from, map[bool]int64{true: limit, false: 0}[from > 0]
}

// parseMemorySize reads a Flink memory size: a number with an optional unit (b, k/kb/kibibytes,
// m/mb, g/gb, t/tb; case and a space before the unit ignored), bytes when there is none.
func parseMemorySize(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if i == 0 || err != nil {
		return 0, fmt.Errorf("memory size %s: want a number with an optional unit (b, k, m, g, t)", shown(v))
	}
	var shift uint
	switch strings.TrimSpace(s[i:]) {
	case "", "b", "bytes":
	case "k", "kb", "kibibytes":
		shift = 10
	case "m", "mb", "mebibytes":
		shift = 20
	case "g", "gb", "gibibytes":
		shift = 30
	case "t", "tb", "tebibytes":
		shift = 40
	default:
		return 0, fmt.Errorf("memory size %s: unknown unit; want b, k, m, g or t", shown(v))
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("memory size %s is too large", shown(v))
	}
	return n << shift, nil
}
