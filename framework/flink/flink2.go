package flink

import (
	"fmt"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// This file is the pre-flight's part of Flink 2's own rules (docs/flink.md#flink-2): a key Flink 2 no
// longer reads is refused for a Flink 2 home, where Flink would ignore it without a word, and only
// warned about for a Flink 1.x home, which still reads it; a Flink 2 home's legacy flink-conf.yaml
// beside its config.yaml is ignored by Flink, and said so. (A Flink 2 home with only the legacy file
// is refused where its configuration is read: flinkdist.Home.Config.)

// checkRemovedKeys refuses the keys of the layered configuration (the home's, the job file's, -D)
// that the home's Flink 2 no longer reads, each saying where it was set.
func (l *layered) checkRemovedKeys() []error {
	if l.home == nil || !flinkdist.IsFlink2(l.home.Version) {
		return nil
	}
	var errs []error
	for _, k := range flinkdist.RemovedKeys(l.conf) {
		v, _ := l.conf.Get(k)
		errs = append(errs, flinkdist.RemovedKeyError(k, v, l.from(k), l.home.Version))
	}
	return errs
}

// flink2Warnings are the pre-flight's warnings about Flink 2: for a Flink 2 home, a legacy
// flink-conf.yaml Flink ignores; for a Flink 1.x home, the keys that Flink 2 no longer reads.
func (l *layered) flink2Warnings() []string {
	if l.home == nil {
		return nil
	}
	if !flinkdist.IsFlink2(l.home.Version) {
		var out []string
		for _, k := range flinkdist.RemovedKeys(l.conf) {
			v, _ := l.conf.Get(k)
			out = append(out, flinkdist.RemovedKeyWarning(k, v, l.from(k), l.home.Version))
		}
		return out
	}
	if legacy := l.home.IgnoredLegacyConfig(); legacy != "" {
		return []string{fmt.Sprintf("flink.home: %s is ignored: Flink %s reads only %s (the legacy file's keys do not apply; move what you need into config.yaml and remove it, docs/flink.md#flink-2)",
			legacy, l.home.Version, l.homeSrc)}
	}
	return nil
}
