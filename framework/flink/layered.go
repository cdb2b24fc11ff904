package flink

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// This file is a [flink] job's Flink configuration as the client sees it (layered): the pre-flight
// (check.go), Flink 2's rules, the preemption and savepoint checks and the demand sizing all read
// it, and the Flink keys more than one of them reads.

// layered is a [flink] job's Flink configuration as the client can see it before anything is
// staged: the home's conf/ (when the home is on this machine), then the job file's Flink keys with
// -D over them, as the containers will layer it (docs/flink.md#configuration); and where each key
// came from, so that a message about a key blames the right place.
type layered struct {
	spec    *flinkSpec
	conf    *flinkdist.Config
	home    *flinkdist.Home   // nil with flink.provided
	homeSrc string            // where the home's configuration was read
	homeCfg *flinkdist.Config // the home's layer alone
	defines map[string]string // the -D Flink keys, the last of each
}

func layer(f *flinkSpec) (*layered, error) {
	l := &layered{spec: f, conf: flinkdist.NewConfig(), homeCfg: flinkdist.NewConfig(), defines: map[string]string{}}
	if f.Home != "" {
		h, err := flinkdist.OpenHome(f.Home)
		if err != nil {
			return nil, fmt.Errorf("flink.home: %w", err)
		}
		c, src, err := h.Config()
		if err != nil {
			return nil, fmt.Errorf("flink.home: %w", err)
		}
		l.home, l.homeSrc, l.homeCfg, l.conf = h, src, c.Clone(), c
	}
	for _, k := range slices.Sorted(maps.Keys(f.Config)) {
		l.conf.Set(k, f.Config[k])
	}
	for _, d := range f.Defines {
		if k, v, ok := strings.Cut(d, "="); ok {
			l.defines[strings.TrimSpace(k)] = v
		}
	}
	return l, nil
}

// jobKeys are the job's own Flink keys: the job file's, then -D, without the home's configuration.
func (l *layered) jobKeys() *flinkdist.Config {
	c := flinkdist.NewConfig()
	for _, k := range slices.Sorted(maps.Keys(l.spec.Config)) {
		c.Set(k, l.spec.Config[k])
	}
	for _, k := range slices.Sorted(maps.Keys(l.defines)) {
		c.Set(k, l.defines[k])
	}
	return c
}

// origin says where a Flink key's value comes from: "-D key=value", "the job file's [flink.config]",
// the home's configuration file, or "" for Flink's default.
func (l *layered) origin(key string) string {
	if v, ok := l.defines[key]; ok {
		return "-D " + key + "=" + bounded(v)
	}
	if _, ok := l.spec.Config[key]; ok {
		if strings.HasPrefix(key, "external-resource") {
			return "the job file"
		}
		return "the job file's [flink.config]"
	}
	if _, ok := l.homeCfg.Get(key); ok {
		return l.homeSrc
	}
	return ""
}

// from is origin as a message's parenthesis: " (from -D ...)", "" for a default.
func (l *layered) from(key string) string {
	if o := l.origin(key); o != "" {
		return " (from " + o + ")"
	}
	return ""
}

// Keys the parallelism check reads.
const (
	keyParallelism = "parallelism.default"
	keySlots       = "taskmanager.numberOfTaskSlots"
	keySchedMode   = "scheduler-mode"
	keyScheduler   = "jobmanager.scheduler"
)

// adapts reports whether the job's scheduler runs at the parallelism the slots allow: the adaptive
// scheduler, which reactive mode uses.
func adapts(c *flinkdist.Config) bool {
	mode, _ := c.Get(keySchedMode)
	sched, _ := c.Get(keyScheduler)
	return strings.EqualFold(strings.TrimSpace(mode), "reactive") || strings.EqualFold(strings.TrimSpace(sched), "adaptive")
}
