package flinkdist

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file computes, in Go, what Flink's BashJavaUtils prints for a process
// (docs/flink.md#memory): the JVM's memory flags and the dynamic properties, from the sizes derive
// computes as Flink 1.20's calculator does. The facts are Flink's ProcessMemoryUtils (the flags),
// TaskExecutorProcessUtils and JobManagerProcessUtils (the properties); no code of theirs.
// TestComputedResourceParamsEqualBashJavaUtils compares the result with Flink's own output. A
// configuration outside what this covers is left to BashJavaUtils (computeResourceParams' error).

// keyJMDirectMemoryLimit is Flink's switch for the JobManager's -XX:MaxDirectMemorySize (off by
// default; a TaskManager always has the limit).
const keyJMDirectMemoryLimit = "jobmanager.memory.enable-jvm-direct-memory-limit"

// computedMemoryKeys are the memory keys of each role whose meaning computeResourceParams knows;
// any other key under the role's memory prefix (a legacy or deprecated name, an overhead fraction,
// a key of a later Flink) leaves the computation to BashJavaUtils.
var computedMemoryKeys = map[Role]map[string]bool{
	RoleTaskManager: setOf(keyTMProcessSize, keyTMFlinkSize, keyTMFrameworkHeap, keyTMTaskHeap, keyTMFrameworkOffHeap,
		keyTMTaskOffHeap, keyTMManaged, keyTMManagedFraction, keyTMNetworkMin, keyTMNetworkMax, keyTMNetworkFraction,
		"taskmanager.memory.jvm-metaspace.size", "taskmanager.memory.jvm-overhead.min", "taskmanager.memory.jvm-overhead.max"),
	RoleApplication: setOf(keyJMProcessSize, keyJMFlinkSize, keyJMHeap, keyJMOffHeap, keyJMDirectMemoryLimit,
		"jobmanager.memory.jvm-metaspace.size", "jobmanager.memory.jvm-overhead.min", "jobmanager.memory.jvm-overhead.max"),
}

// legacyMemory are the keys and environment variables of Flink's pre-1.10 memory model, which
// Flink's calculator maps onto the new one (left to it).
var legacyMemory = map[Role][]string{
	RoleTaskManager: {"taskmanager.heap.size", "taskmanager.heap.mb", "taskmanager.network.memory.min",
		"taskmanager.network.memory.max", "taskmanager.network.memory.fraction", "$FLINK_TM_HEAP"},
	RoleApplication: {"jobmanager.heap.size", "jobmanager.heap.mb", "$FLINK_JM_HEAP"},
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

var (
	// A taskmanager.cpu.cores whose Java rendering (String.valueOf(double)) is its plain decimal.
	plainCores = regexp.MustCompile(`^[0-9]{1,6}(\.[0-9]{1,3})?$`)
	plainInt   = regexp.MustCompile(`^-?[0-9]{1,18}$`)
	plainName  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// computeResourceParams returns what Flink 1.20's BashJavaUtils prints for role from c (the
// configuration configure returned, with the process size set): the JVM flags, byte for byte, and
// the dynamic properties (sorted by key; Flink prints them in a hash map's order). An error says why
// the configuration is left to BashJavaUtils: a key it does not cover, a size Flink would refuse
// (BashJavaUtils then reports Flink's own error), more than one external resource.
func computeResourceParams(c *Config, role Role) (ResourceParams, error) {
	memRole := role
	sizeKey := keyTMProcessSize
	prefix := "taskmanager.memory."
	if role != RoleTaskManager {
		memRole, sizeKey, prefix = RoleApplication, keyJMProcessSize, "jobmanager.memory."
	}
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, prefix) && !computedMemoryKeys[memRole][k] {
			return ResourceParams{}, fmt.Errorf("%s is not computed by yarn-am", k)
		}
	}
	for _, k := range legacyMemory[memRole] {
		if name, ok := strings.CutPrefix(k, "$"); ok {
			if os.Getenv(name) != "" {
				return ResourceParams{}, fmt.Errorf("the legacy $%s is set", name)
			}
		} else if _, ok := c.Get(k); ok {
			return ResourceParams{}, fmt.Errorf("the legacy key %s is set", k)
		}
	}
	v, ok := c.Get(sizeKey)
	if !ok {
		return ResourceParams{}, fmt.Errorf("%s is not set", sizeKey)
	}
	process, err := parseMemorySize(v)
	if err != nil {
		return ResourceParams{}, fmt.Errorf("%s: %w", sizeKey, err)
	}
	p, err := readMemParams(c, memRole)
	if err != nil {
		return ResourceParams{}, err
	}
	s, err := p.derive(process)
	if err != nil {
		return ResourceParams{}, err
	}
	dyn := map[string]string{}
	b := func(n int64) string { return strconv.FormatInt(n, 10) + "b" }
	var direct int64 = -1
	if memRole == RoleTaskManager {
		direct = p.frameworkOffHeap.val + p.taskOffHeap.val + s.Network
		s.Heap += s.TaskHeap
		cores, slots, err := cpuCoresAndSlots(c)
		if err != nil {
			return ResourceParams{}, err
		}
		res, err := externalResourceProps(c)
		if err != nil {
			return ResourceParams{}, err
		}
		for k, v := range res {
			dyn[k] = v
		}
		dyn["taskmanager.cpu.cores"] = cores
		dyn["taskmanager.numberOfTaskSlots"] = slots
		dyn[keyTMFrameworkHeap] = b(p.heap.val)
		dyn[keyTMFrameworkOffHeap] = b(p.frameworkOffHeap.val)
		dyn[keyTMTaskHeap] = b(s.TaskHeap)
		dyn[keyTMTaskOffHeap] = b(p.taskOffHeap.val)
		dyn[keyTMNetworkMin] = b(s.Network)
		dyn[keyTMNetworkMax] = b(s.Network)
		dyn[keyTMManaged] = b(s.Managed)
	} else {
		if on, set := c.Get(keyJMDirectMemoryLimit); set {
			switch strings.ToLower(strings.TrimSpace(on)) {
			case "true":
				direct = s.OffHeap
			case "false":
			default:
				return ResourceParams{}, fmt.Errorf("%s = %s is not true or false", keyJMDirectMemoryLimit, shown(on))
			}
		}
		dyn[keyJMHeap] = b(s.Heap)
		dyn[keyJMOffHeap] = b(s.OffHeap)
	}
	dyn[prefix+"jvm-metaspace.size"] = b(s.Metaspace)
	dyn[prefix+"jvm-overhead.min"] = b(s.Overhead)
	dyn[prefix+"jvm-overhead.max"] = b(s.Overhead)

	// ProcessMemoryUtils' order: heap (maximum and initial), direct memory when limited, metaspace.
	heap := strconv.FormatInt(s.Heap, 10)
	out := ResourceParams{JVM: []string{"-Xmx" + heap, "-Xms" + heap}}
	if direct >= 0 {
		out.JVM = append(out.JVM, "-XX:MaxDirectMemorySize="+strconv.FormatInt(direct, 10))
	}
	out.JVM = append(out.JVM, "-XX:MaxMetaspaceSize="+strconv.FormatInt(s.Metaspace, 10))
	keys := make([]string, 0, len(dyn))
	for k := range dyn {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Dynamic = append(out.Dynamic, k+"="+dyn[k])
	}
	return out, nil
}

// cpuCoresAndSlots are taskmanager.cpu.cores as Flink renders the double (the number of slots when
// unset) and taskmanager.numberOfTaskSlots (1 when unset).
func cpuCoresAndSlots(c *Config) (string, string, error) {
	slots := "1"
	if v, ok := c.Get("taskmanager.numberOfTaskSlots"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return "", "", fmt.Errorf("taskmanager.numberOfTaskSlots = %s is not a positive integer", shown(v))
		}
		slots = strconv.Itoa(n)
	}
	v, ok := c.Get("taskmanager.cpu.cores")
	if !ok {
		return slots + ".0", slots, nil
	}
	v = strings.TrimSpace(v)
	f, err := strconv.ParseFloat(v, 64)
	if !plainCores.MatchString(v) || err != nil || f <= 0 {
		return "", "", fmt.Errorf("taskmanager.cpu.cores = %s is not a plain positive decimal", shown(v))
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s, slots, nil
}

// externalResourceProps are external-resources and each resource's amount as Flink passes them on:
// the resources with a positive amount, "none" when there is none. Flink joins several in a hash
// set's order, which is left to BashJavaUtils.
func externalResourceProps(c *Config) (map[string]string, error) {
	v, _ := c.Get(keyExternalRes)
	v = strings.TrimSpace(v)
	if v == "" || v == "none" {
		return map[string]string{keyExternalRes: "none"}, nil
	}
	var with []string
	amounts := map[string]string{}
	for _, name := range strings.Split(v, ";") {
		if !plainName.MatchString(name) {
			return nil, fmt.Errorf("%s = %s is not a ;-separated list of plain names", keyExternalRes, shown(v))
		}
		key := "external-resource." + name + ".amount"
		a, ok := c.Get(key)
		if !ok {
			continue // Flink ignores a resource without an amount
		}
		a = strings.TrimSpace(a)
		if !plainInt.MatchString(a) {
			return nil, fmt.Errorf("%s = %s is not an integer", key, shown(a))
		}
		if n, _ := strconv.ParseInt(a, 10, 64); n > 0 {
			with = append(with, name)
			amounts[key] = strconv.FormatInt(n, 10)
		}
	}
	switch len(with) {
	case 0:
		return map[string]string{keyExternalRes: "none"}, nil
	case 1:
		amounts[keyExternalRes] = `"` + with[0] + `"`
		return amounts, nil
	}
	return nil, fmt.Errorf("%s names %d resources with an amount", keyExternalRes, len(with))
}

// ResourceParams is what Flink's BashJavaUtils computes from the configuration: the JVM's memory
// flags and the derived memory settings the process must be given as dynamic properties.
type ResourceParams struct {
	JVM     []string // -Xmx... -Xms... -XX:MaxDirectMemorySize=... -XX:MaxMetaspaceSize=...
	Dynamic []string // key=value, passed as -D key=value
}
