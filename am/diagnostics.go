package am

import (
	"maps"
	"slices"
	"strings"

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
