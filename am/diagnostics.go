package am

import (
	"fmt"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/internal/text"
)

// The diagnostics of a container's end, said once (docs/running.md#the-workers-own-error).
//
// A worker that fails: its launcher reports the last lines of the worker's own stderr
// (contract.ContainerReport.WorkerStderr), which replace YARN's diagnostics (its boilerplate and the
// "Last 4096 bytes of stderr", which end in the launcher's log lines) in the container's exit, its
// completed event (contract.Event.StderrTail), its status entry and the application's diagnostics
// (TestCompletionWithStderrTailIsInEventStatusAndDiagnostics). A discovery failure: the launcher's
// message alone, once (TestDiscoveryFailureIsWordedOnceAndExcludesTheNode).

// maxDiagPerContainer bounds one container's part of the application's diagnostics.
const maxDiagPerContainer = 600

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

// cutText returns s if it has at most n bytes, else its start cut at the last line end or space
// before n (never inside a word or a UTF-8 sequence, unless a single word is longer than n) and " …".
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := text.Cut(s, n)
	if i := strings.LastIndexByte(head, '\n'); i > n/2 {
		head = head[:i]
	} else if i := strings.LastIndexAny(head, " \t"); i > n/2 {
		head = head[:i]
	} else {
		head = strings.ToValidUTF8(head, "") // what YARN's diagnostics carry is text: no stray bytes
	}
	return strings.TrimRight(head, " \t\n") + " …"
}

// containerFailureLine is one failed container in the application's diagnostics: where, how it
// ended and its own diagnostics, each once.
func containerFailureLine(c Container) string {
	line := fmt.Sprintf("%s on %s %s", c.ID, c.Node, describe(c.Exit.Status, c.Exit.Class))
	if d := strings.TrimSpace(c.Exit.Diagnostics); d != "" {
		line += ": " + cutText(d, maxDiagPerContainer)
	}
	return line
}

// nodeLacksEvent: a container's launcher found the node unfit (discovery failed): the node is
// excluded at once, whatever --node-max-failures says, since every container there would fail the
// same way.
func nodeLacksEvent(node, why string) contract.Event {
	ev := NodeExcludedEvent(node, 1, 0, 0)
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
	return cutText(strings.TrimSpace(s), 300)
}

// excludeUnfit excludes node at once for --node-exclusion-timeout (a discovery failure there: the node
// lacks what the job needs); false if node exclusion is off (--node-max-failures 0) or the node is
// excluded already. The failure itself still counts once toward taskexecutor.max-failures
// (contract.ExitClass.Counts): a job whose every node lacks the device fails rather than waits.
func (p *Policy) excludeUnfit(now time.Time, node string) bool {
	if node == "" || p.cfg.NodeMaxFailures <= 0 {
		return false
	}
	if _, already := p.excluded[node]; already {
		return false
	}
	p.excluded[node] = now.Add(p.cfg.NodeExclusionTimeout)
	return true
}
