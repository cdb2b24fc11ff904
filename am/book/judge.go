package book

import (
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
)

// Verdict is what the failure policy made of a TaskExecutor's end (Book.Judge): the node it
// excluded and why, the application's end it decided, and the events to emit, in order.
type Verdict struct {
	// Unfit is the node excluded at once because it cannot run the job's workers (its launcher's
	// discovery failed); Excluded the node excluded after NodeFailures failures on it.
	Unfit, Excluded string
	NodeFailures    int
	// Failed is why the application fails now ("" while it does not; the first reason wins: End).
	Failed string
	Events []contract.Event
}

// NodeLacksEvent: a container's launcher found the node unfit (discovery failed): the node is
// excluded at once, whatever --node-max-failures says, since every container there would fail the
// same way.
func NodeLacksEvent(node, why string) contract.Event {
	ev := events.NodeExcluded(node, 1, 0, 0)
	ev.Reason = why
	ev.Message = fmt.Sprintf("node %s excluded: it cannot run this job's workers: %s", node, LacksText(why))
	return ev
}

// LacksText is the line of a discovery failure that says what the node lacks: the discovery
// program's own stderr ("nvidia-smi not found on PATH ...") when the driver quotes it, else the
// failure's first line. The discovery-failed event just before has the whole text.
func LacksText(why string) string {
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
