package jobfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// preemptionSignal reads taskexecutor.preemption-signal (docs/job-file.md#the-job-file): the signal
// the launcher sends the worker when the ResourceManager warns that it takes the container back
// (docs/running.md#preemption). Default contract.DefaultPreemptionSignal; "none" sends none (the
// worker still gets the notice file).
func (r reader) preemptionSignal(teT map[string]any) string {
	s, ok := r.str(teT, "preemption-signal", "taskexecutor.preemption-signal")
	if !ok {
		return contract.DefaultPreemptionSignal
	}
	if err := validPreemptionSignal(s); err != "" {
		r.add("%s", err)
		return contract.DefaultPreemptionSignal
	}
	return strings.TrimSpace(s)
}

// validPreemptionSignal says what is wrong with a value of taskexecutor.preemption-signal ("" when
// it is valid). The launcher knows the same names (launcher.ParsePreemptionSignal;
// TestParsePreemptionSignal holds the two together).
func validPreemptionSignal(s string) string {
	v := strings.TrimSpace(s)
	if v == contract.PreemptionSignalNone || slices.Contains(contract.PreemptionSignals, v) {
		return ""
	}
	shown := s
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	return fmt.Sprintf("taskexecutor.preemption-signal = %q: not a signal the launcher sends; use one of %s (the default is %s), or %q to send none",
		shown, strings.Join(contract.PreemptionSignals, ", "), contract.DefaultPreemptionSignal, contract.PreemptionSignalNone)
}
