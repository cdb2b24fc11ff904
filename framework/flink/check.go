package flink

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// preflight is a [flink] job's pre-flight before anything is staged (docs/flink.md#what-check-refuses):
// each role's memory as Flink's own calculator would size it (docs/flink.md#the-memory-check), plain
// the job's own REST TLS (checkUserRESTTLS), the JobManager's ports (checkPorts), the job's parallelism against the slots
// it will have, and the job's jar against its main class. A message about a Flink key says where the
// key was set.
func preflight(job *jobfile.Job) error {
	f := specOf(job)
	l, err := layer(f)
	if err != nil {
		return err
	}
	var errs []error
	errs = append(errs, l.checkRemovedKeys()...)
	if err := checkUserRESTTLS(l.conf, f.RESTWithoutClientAuth); err != nil {
		// Each of its problems says where the TLS was turned on.
		each := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			each = j.Unwrap()
		}
		for _, e := range each {
			errs = append(errs, fmt.Errorf("%w%s", e, l.from(flinkdist.KeyRESTSSL)))
		}
	}
	if err := checkInternalTLSKeys(l.conf, f.InternalTLS); err != nil {
		errs = append(errs, err)
	}
	if err := checkPorts(l.jobKeys(), l.from); err != nil {
		errs = append(errs, err)
	}
	if f.TaskManagersMode == taskManagersDemand {
		if err := checkDemand(l.conf); err != nil {
			errs = append(errs, fmt.Errorf("%w%s", err, l.from(keyTaskManagerTimeout)))
		}
	}
	if err := checkAutoscale(f, adapts(l.conf)); err != nil {
		errs = append(errs, err)
	}
	// A provided home is on HDFS: its plugins are checked in the containers (loadFlinkSetup).
	if _, err := flinkdist.DefaultGPUDriver(l.conf, l.home); err != nil {
		errs = append(errs, err)
	}
	tm := job.TaskExecutor.MemoryMB
	if err := flinkdist.CheckMemory(l.conf, flinkdist.RoleTaskManager, tm); err != nil {
		errs = append(errs, fmt.Errorf("taskexecutor.memory = %d: a [flink] job's TaskManager has the container's memory as its process size (taskmanager.memory.process.size): %w%s", tm, err, l.memoryFrom(err)))
	}
	jm := job.AM.MemoryMB - amShareMB
	role := flinkdist.RoleSession
	if f.Jar != "" {
		role = flinkdist.RoleApplication
	}
	if err := flinkdist.CheckMemory(l.conf, role, jm); err != nil {
		errs = append(errs, fmt.Errorf("am.memory = %d: the JobManager's process size (jobmanager.memory.process.size) is am.memory less the AM's %d MiB, %d MiB: %w%s", job.AM.MemoryMB, amShareMB, jm, err, l.memoryFrom(err)))
	}
	if f.Jar != "" {
		errs = append(errs, l.checkParallelism(job.TaskExecutor.Instances), checkJar(f))
	}
	errs = append(errs, l.checkPreemptionSavepoint(), l.checkSavepointSchedule())
	return errors.Join(errs...)
}

// memoryFrom is where the configured size a memory error names was set.
func (l *layered) memoryFrom(err error) string {
	var me *flinkdist.MemoryError
	if errors.As(err, &me) && me.Key != "" {
		return l.from(me.Key)
	}
	return ""
}

// checkParallelism refuses an application whose default parallelism needs more slots than its
// TaskManagers will have: Flink's default scheduler would wait for the missing slots
// (slot.request.timeout) and then fail the job with NoResourceAvailableException. The adaptive
// scheduler (reactive mode) runs at what the slots allow. A value Flink cannot read is Flink's to
// report.
func (l *layered) checkParallelism(instances int) error {
	if adapts(l.conf) || instances <= 0 {
		return nil
	}
	p, ok := l.intKey(keyParallelism)
	if !ok {
		return nil
	}
	slots, ok := l.intKey(keySlots)
	if !ok || p <= instances*slots {
		return nil
	}
	slotsFrom := l.from(keySlots)
	if slotsFrom == "" {
		slotsFrom = " (Flink's default)"
	}
	return fmt.Errorf("%s = %d%s: more than the %d slots the job will have (taskexecutor.instances = %d × %s = %d%s); Flink would wait for the missing slots (slot.request.timeout) and then fail the job with NoResourceAvailableException. Lower %s to %d, raise taskexecutor.instances to %d or %s to %d, or set %q = \"reactive\" in [flink.config] to run at the parallelism the slots allow (docs/flink.md#what-check-refuses)",
		keyParallelism, p, l.from(keyParallelism), instances*slots, instances, keySlots, slots, slotsFrom,
		keyParallelism, instances*slots, ceilDiv(p, slots), keySlots, ceilDiv(p, instances), keySchedMode)
}

// intKey reads a positive integer key, 1 when unset (the default of both keys checkParallelism
// reads); ok false when the value is not one.
func (l *layered) intKey(key string) (int, bool) {
	v, set := l.conf.Get(key)
	if !set {
		return 1, true
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil && n > 0
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// checkWarnings are what the pre-flight finds that works but is likely a mistake: a [flink] java-home
// older than the home's Flink version needs (javaHomeWarning), a Flink key of
// the job file or -D that the home's Flink version does not declare and that is a near miss of one it
// does (taskmanager.numberOfTaskSlot), which Flink would ignore without a word. The known keys are
// read from the home's jars (flinkdist.Home.KnownKeys) and kept beside the packed homes; with
// flink.provided, or a home whose jars cannot be read, there are none to compare with.
func checkWarnings(job *jobfile.Job) []string {
	f := specOf(job)
	if f == nil || f.Home == "" {
		return nil
	}
	l, err := layer(f)
	if err != nil {
		return nil // preflight reports it
	}
	var out []string
	if w := javaHomeWarning(f, l.home); w != "" {
		out = append(out, w)
	}
	out = append(out, l.flink2Warnings()...)
	// The key list kept beside the archives is read and written only where they would be reused.
	cache := flinkArchiveCache()
	if privateArchiveDir(cache) != "" {
		cache = ""
	}
	known, err := l.home.KnownKeys(cache)
	if err != nil || len(known) == 0 {
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(f.Config)) {
		if near := flinkdist.NearMiss(k, known); near != "" {
			out = append(out, fmt.Sprintf("Flink key %q%s is not a key of Flink %s (did you mean %q?); Flink ignores a key it does not know (docs/flink.md#what-check-refuses)",
				bounded(k), l.from(k), l.home.Version, near))
		}
	}
	return out
}
