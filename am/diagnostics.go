package am

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/events"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// The diagnostics of a container's end, said once (docs/running.md#the-workers-own-error).
//
// A worker that fails: its launcher reports the last lines of the worker's own stderr
// (contract.ContainerReport.WorkerStderr), redacted of the secrets the AM knows (web, with
// secretsRedactor's), which replace YARN's diagnostics (its boilerplate and the "Last 4096 bytes of
// stderr", which end in the launcher's log lines). The lines themselves are kept only in the fields
// that readers with the secret get (contract.Event.StderrTail, contract.ContainerStatus.StderrTail;
// web's visibility.go); the container's exit, and with it the application's diagnostics, which the
// RM shows anyone who can list applications, say where to find them
// (TestCompletionWithStderrTailIsInEventStatusAndDiagnostics). The driver's tail likewise
// (contract.Status.DriverStderrTail; TestDriverOutcomeCarriesTheDriversLastStderrLines, TestDriverExitSeenWhileAChildHoldsStderr). A
// discovery failure: the launcher's message alone, once
// (TestDiscoveryFailureIsWordedOnceAndExcludesTheNode).

// driverStderrPointer is the driver's counterpart of book.WorkerStderrDiagnostics in the
// application's diagnostics.
const driverStderrPointer = "its last stderr lines are shown to the application's owner: `yarn-am status`, or am.stderr in `yarn-am logs`"

// driverTail is the driver's redacted stderr tail once it exited non-zero, else "". The caller holds
// the driver's mutex (exit is its driverProc.exit).
func driverTail(t *stderrtail.Tail, exit *int) string {
	if t == nil || exit == nil || *exit == 0 {
		return ""
	}
	return t.Lines()
}

// secretsRedactor replaces what a stderr tail must not quote: the application secret (from creds,
// or secret when given) and the passwords of the delegation tokens in creds.
func secretsRedactor(creds *yarnrpc.Credentials, secret string) *stderrtail.Redactor {
	r := &stderrtail.Redactor{}
	if secret != "" {
		r.Add("application secret", []byte(secret))
	}
	if creds == nil {
		return r
	}
	if s := creds.Secrets[contract.SecretAlias]; len(s) > 0 {
		r.Add("application secret", s)
	}
	for _, alias := range slices.Sorted(maps.Keys(creds.Tokens)) {
		r.Add(creds.Tokens[alias].Kind+" password", creds.Tokens[alias].Password)
	}
	return r
}

// driverRedactor is secretsRedactor for the driver: its environment's secret (contract.EnvSecret)
// and its token file's tokens.
func driverRedactor(env []string, tokens *yarnrpc.Credentials) *stderrtail.Redactor {
	secret := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, contract.EnvSecret+"="); ok {
			secret = v
		}
	}
	return secretsRedactor(tokens, secret)
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
