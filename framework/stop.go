package framework

import "time"

// StateRequest is how the AM asks a framework to keep its work's state: before it stops
// (AM.OnStop: yarn-am stop, POST /api/v1/stop) or while the work runs on (AM.OnKeepState: yarn-am
// savepoint, POST /api/v1/savepoint). What the state is, and how it is kept, is the framework's answer
// (a Flink job's savepoint, docs/flink.md#stopping-with-a-savepoint).
type StateRequest struct {
	// Dir is where the state goes, as the user gave it: a URI or an absolute path the framework's
	// processes can write, checked by the client (internal/cli.CheckDir) and the AM (at most 4096
	// bytes); "" = the framework's configured place, and without one the framework refuses,
	// saying how to give one.
	Dir string
	// Deadline is when the AM gives up on the request (the command's --timeout); the context the
	// framework is called with ends then too. A framework that hands the request to a server of its
	// own may pass it on.
	Deadline time.Time
}

// Kept is a framework's answer to a StateRequest: where the state went, and what it is called.
type Kept struct {
	// What names the state the way the framework's users know it ("Savepoint"); yarn-am stop and
	// savepoint print "<What>: <Where>", and "State: <Where>" when it is empty.
	What string
	// Where is the state's place (a path or URI), or what the framework did when it kept none.
	Where string
}
