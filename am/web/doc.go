// Package web is the ApplicationMaster's HTTP side (docs/running.md#http-api): the API's routes and
// their auth (the application secret, on HTTPS only), what anonymous readers see, the launchers'
// endpoints, the event stream as Server-Sent Events, the embedded status page, and the two servers
// with the bound on their connections and streams.
//
// # Seams
//
// It knows nothing of package am, which imports it: it reads and changes the AM only through State
// (implemented by package am's *am, whose methods take the AM's mutex themselves and return
// copies), follows the events through EventLog and Subscription, serves the tokens through Tokens
// and /metrics through an http.Handler; Backend carries the three. A handler never holds a lock of its own across a State
// call but reportCounter's, which gives the lock order reportCounter.mu → the AM's mu (am/doc.go).
//
// # Files
//
//   - state.go: State, EventLog, Subscription, Tokens, Backend, Rendezvous and Report's errors.
//   - api.go: Options, Handler (one listener's mux: status, containers, requirements, events,
//     metrics, the page), the secret check, the security headers, bounded bodies, the report
//     counter, the redaction of the secret from reports.
//   - stop.go: POST /api/v1/stop, the application stopped through its framework (yarn-am stop;
//     Options.Stop), secret-only.
//   - keepstate.go: POST /api/v1/savepoint, the work's state kept without stopping it (yarn-am
//     savepoint; Options.KeepState), secret-only.
//   - launcher.go: the launchers' endpoints: report, alive, notices (the preemption long poll),
//     rendezvous, tokens.
//   - published.go: GET /api/v1/framework/published, what the framework published for its
//     TaskExecutors (Options.Published), secret-only.
//   - sse.go: GET /api/v1/events as Server-Sent Events (resumable) or a JSON array, and the bound on
//     streams.
//   - proxy.go: a framework's UI and API under its prefix (Options.Proxy): who reaches which path
//     (framework.Proxy.Access), the bound on anonymous exchanges, the redaction of logs.
//   - slots.go: the bound on long exchanges (streams, proxied ones) in total and per address.
//   - visibility.go: what anonymous readers see (no rank 0 address, only this application's nodes,
//     no stderr tail, no event's detail).
//   - ui.go + ui/: the status page (summary, device map, timeline, containers, events), drawn in the
//     browser from GET /api/v1/status.
//   - server.go: Serve and the two HTTP servers (plain and HTTPS).
//   - conns.go: the bound on their connections, both ports together: anonymous ones in total and
//     per client address, where beyond a bound the oldest idle connection is closed to make room
//     rather than the new one refused, and those that showed the secret in a budget of their own;
//     every exchange's write and body deadlines.
package web
