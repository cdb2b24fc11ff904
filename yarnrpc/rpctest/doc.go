// Package rpctest is an in-process fake Hadoop RPC server for tests of yarnrpc and of everything built
// on it (the AM's scale simulation included).
//
// A Server listens on 127.0.0.1:0 and speaks the same framing and SASL as Hadoop: SIMPLE, and TOKEN
// with a server-side DIGEST-MD5 written independently of yarnrpc's client so that each checks the
// other. Tests register a Handler per (protocol, method); a handler returns a response message or an
// *Exception, which goes back as a Java remote exception.
//
// Seams for fault injection: SetFaults (per call: delay, drop the response, malformed or oversize
// frame, close the connection, StandbyException), SetStandby (the whole server acts as a standby
// RM), SetReorder (responses sent newest first), CloseConnections and Close (a server that is down).
// Counters (Calls, Pings, Accepted, Connections) let tests assert what reached the server.
//
// Every call runs in its own goroutine, so delayed calls do not hold up others on the same connection.
package rpctest
