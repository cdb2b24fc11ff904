package am

import (
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// The diagnostics of a container's end, said once (docs/running.md#the-workers-own-error).
//
// A worker that fails: its launcher reports the last lines of the worker's own stderr
// (contract.ContainerReport.WorkerStderr), which replace YARN's diagnostics (its boilerplate and the
// "Last 4096 bytes of stderr", which end in the launcher's log lines) in the container's exit, its
// completed event (contract.Event.StderrTail), its status entry and the application's diagnostics
// (TestCompletionWithStderrTailIsInEventStatusAndDiagnostics). A discovery failure: the launcher's
// message alone, once (TestDiscoveryFailureIsWordedOnceAndExcludesTheNode).

// workerStderrDiagnostics is a failed container's diagnostics when its launcher reported the
// worker's stderr tail.
func workerStderrDiagnostics(tail string) string {
	return "its stderr ends with:\n" + tail
}

// discoveryFailureText is the launcher's discovery failure as the AM words it: the launcher's own
// message names the resource already ("discovery failed for resource \"gpu\": ..."); older launchers
// send the driver's error alone.
func discoveryFailureText(resource, failure string) string {
	if strings.HasPrefix(failure, "discovery failed for resource") {
		return failure
	}
	return "discovery failed for resource " + resource + ": " + failure
}

// nodeLacksEvent: a container's launcher found the node unfit (discovery failed): the node is
// excluded at once, whatever --node-max-failures says, since every container there would fail the
// same way.
func nodeLacksEvent(node, why string) contract.Event {
	ev := events.NodeExcluded(node, 1, 0, 0)
	ev.Reason = why
	ev.Message = fmt.Sprintf("node %s excluded: it cannot run this job's workers: %s", node, lacksText(why))
	return ev
}

// lacksText is the line of a discovery failure that says what the node lacks: the discovery
// program's own stderr ("nvidia-smi not found on PATH ...") when the driver quotes it, else the
// failure's first line. The discovery-failed event just before has the whole text.
func lacksText(why string) string {
	s := why
	if rest, ok := strings.CutPrefix(s, "discovery failed for resource "); ok {
		if _, after, found := strings.Cut(rest, ": "); found {
			s = after
		}
	}
	if i := strings.LastIndex(s, "stderr: "); i >= 0 && strings.TrimSpace(s[i+len("stderr: "):]) != "" {
		s = s[i+len("stderr: "):]
	}
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return decision.CutText(strings.TrimSpace(s), 300)
}
