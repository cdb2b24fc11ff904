package client

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/yarn-am/yarn-am/contract"
)

// Each diagnostic once (docs/running.md#the-workers-own-error). The AM says a failed container's end
// in its completed event (with the worker's stderr tail), again in the failure-limit-reached event's
// reason, again in the finished event, and the ResourceManager's final diagnostics repeat that. While
// following, `submit` prints the completed event with the tail, and of the later texts only what it
// has not printed yet (TestFollowPrintsEachDiagnosticOnce).

// shownText remembers what the follower printed: the containers whose end it showed, and the first
// lines of the reasons it printed in full.
type shownText struct {
	mu         sync.Mutex
	containers map[string]bool
	reasons    map[string]bool
}

// maxShown bounds what is remembered (a long service may end thousands of containers).
const maxShown = 4096

func (s *shownText) container(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.containers == nil {
		s.containers = map[string]bool{}
	}
	if len(s.containers) < maxShown {
		s.containers[id] = true
	}
}

func (s *shownText) reason(r string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reasons == nil {
		s.reasons = map[string]bool{}
	}
	if len(s.reasons) < maxShown {
		s.reasons[firstLineOf(r)] = true
	}
}

// seenReason: a text whose first line was printed before (as a reason).
func (s *shownText) seenReason(r string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reasons[firstLineOf(r)]
}

// unseen returns text without the parts already printed: the lines "- <container> ..." (with their
// continuation lines) of the failure list the AM's diagnostics hold, for containers whose end was
// printed. The first line always stays.
func (s *shownText) unseen(text string) string {
	if s == nil {
		return text
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := strings.Split(text, "\n")
	out := lines[:1:1]
	skipping, dropped := false, 0
	for _, l := range lines[1:] {
		if rest, ok := strings.CutPrefix(l, "- "); ok {
			id, _, _ := strings.Cut(rest, " ")
			skipping = s.containers[id]
		}
		if skipping {
			dropped++
			continue
		}
		out = append(out, l)
	}
	if dropped > 0 && len(out) == 1 {
		out[0] += " (each failure is shown above)"
	}
	return strings.Join(out, "\n")
}

// printEvent prints e for a terminal, each diagnostic once: a completed event with the worker's
// stderr tail, the tail under it; a failure-limit-reached or finished event without what was shown.
func (s *shownText) printEvent(out io.Writer, stamp string, e contract.Event) {
	switch e.Type {
	case contract.EventFailureLimitReached:
		e.Message = s.unseen(e.Message)
		s.reason(e.Reason)
	case contract.EventFinished:
		if e.Reason != "" && s.seenReason(e.Reason) {
			e.Message = fmt.Sprintf("application finished: %s (the reason is above)", e.Status)
		} else {
			e.Message = s.unseen(e.Message)
			if e.Reason != "" {
				s.reason(e.Reason)
			}
		}
	}
	fmt.Fprintf(out, "%s   %s\n", stamp, EventLine(e))
	if e.Type == contract.EventCompleted && e.Container != "" && e.StderrTail != "" {
		fmt.Fprintf(out, "%s     its stderr ends with:\n", stamp)
		for _, l := range strings.Split(Sanitize(e.StderrTail), "\n") {
			fmt.Fprintf(out, "%s       %s\n", stamp, l)
		}
		s.container(e.Container)
	}
	if e.Type == contract.EventFinished && e.StderrTail != "" { // the driver's, for its owner
		fmt.Fprintf(out, "%s     the driver's stderr ends with:\n", stamp)
		for _, l := range strings.Split(Sanitize(e.StderrTail), "\n") {
			fmt.Fprintf(out, "%s       %s\n", stamp, l)
		}
	}
}

// lastLineOf is the last non-empty line of s.
func lastLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}
