// Package rpctest is an in-process fake Hadoop RPC server for tests of yarnrpc and of everything built
// on it (the AM's scale simulation included).
//
// A Server listens on 127.0.0.1:0 and speaks the same framing and SASL as Hadoop: SIMPLE, TOKEN
// with a server-side DIGEST-MD5, and KERBEROS with a GSSAPI acceptor (Kerberos: a service key and a
// ticket minting function in place of a KDC), all written independently of yarnrpc's client so that
// each checks the other. Options.QOP and Kerberos.QOP offer auth-int and auth-conf: every message
// after the handshake is then wrapped both ways (DIGEST-MD5 with rc4; GSSAPI wrap tokens, sealed ones
// rotated like Windows does). Tests register a Handler per (protocol, method); a handler returns a response message or an
// *Exception, which goes back as a Java remote exception.
//
// Seams for fault injection: SetFaults (per call: delay, drop the response, malformed or oversize
// frame, close the connection, StandbyException), SetStandby (the whole server acts as a standby
// RM), SetReorder (responses sent newest first), CloseConnections and Close (a server that is down).
// Counters (Calls, Pings, Accepted, Connections) let tests assert what reached the server.
//
// Every call runs in its own goroutine, so delayed calls do not hold up others on the same connection.
//
// Files by what they serve: server.go (the listener, its options and the test-facing controls and
// counters), conn.go (one connection: header, read loop, writes through the security layer),
// sasl.go (the handshake), calls.go (handlers, faults and exceptions), frame.go (framing), and
// digest.go, kerberos.go, qop.go (the mechanisms and their security layers).
package rpctest
