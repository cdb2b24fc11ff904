package client

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/yarn-am/yarn-am/container/flink"
	"github.com/yarn-am/yarn-am/container/jobfile"
)

// flinkMemory checks a [flink] job's memory before anything is staged (docs/flink.md#the-memory-check):
// each TaskManager's process size is [taskexecutor] memory and the JobManager's [am] memory less the
// AM's share; Flink's configuration is layered as the containers will (the home's conf/, when the
// home is on this machine, then the job file's Flink keys with -D), and each role must fit as Flink's
// own calculator would size it. It also refuses TLS on the JobManager's REST API, which the AM and
// the TaskManagers read over plain HTTP (flink.CheckPlainREST).
func flinkMemory(job *jobfile.Job) error {
	conf := flink.NewConfig()
	if job.Flink.Home != "" {
		h, err := flink.OpenHome(job.Flink.Home)
		if err != nil {
			return fmt.Errorf("flink.home: %w", err)
		}
		if conf, _, err = h.Config(); err != nil {
			return fmt.Errorf("flink.home: %w", err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(job.Flink.Config)) {
		conf.Set(k, job.Flink.Config[k])
	}
	errs := []error{flink.CheckPlainREST(conf)}
	tm := job.TaskExecutor.MemoryMB
	if err := flink.CheckMemory(conf, flink.RoleTaskManager, tm); err != nil {
		errs = append(errs, fmt.Errorf("taskexecutor.memory = %d: a [flink] job's TaskManager has the container's memory as its process size (taskmanager.memory.process.size): %w", tm, err))
	}
	jm := job.AM.MemoryMB - jobfile.FlinkAMShareMB
	role := flink.RoleSession
	if job.Flink.Jar != "" {
		role = flink.RoleApplication
	}
	if err := flink.CheckMemory(conf, role, jm); err != nil {
		errs = append(errs, fmt.Errorf("am.memory = %d: the JobManager's process size (jobmanager.memory.process.size) is am.memory less the AM's %d MiB, %d MiB: %w", job.AM.MemoryMB, jobfile.FlinkAMShareMB, jm, err))
	}
	return errors.Join(errs...)
}
