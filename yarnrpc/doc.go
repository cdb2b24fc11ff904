// Package yarnrpc is yarn-am's Hadoop IPC client: the wire protocol the ResourceManager, NodeManagers
// and NameNode speak ("hrpc" version 9 with protobuf requests), and the typed protocol clients built
// on it.
//
// Layers, one concept per file:
//
//   - frame.go: length-prefixed frames of varint-delimited messages; response frames are bounded by
//     ConnOptions.MaxResponseLength before anything is allocated.
//   - conn.go: Conn, one authenticated connection; concurrent calls multiplexed by call id, context
//     deadlines per call, pings while calls wait on a silent server, idle close.
//   - sasl.go, digestmd5.go: the SASL handshake (SIMPLE fallback, TOKEN via DIGEST-MD5).
//   - client.go, backoff.go: Client, a connection per (address, protocol, user), reconnect with capped
//     exponential backoff and jitter, RM HA failover on connection failure and StandbyException.
//   - errors.go: the one place where Java exceptions become Go errors (RemoteError, sentinels for
//     errors.Is, ConnError).
//   - config.go: Hadoop XML configuration (HADOOP_CONF_DIR / YARN_CONF_DIR) with ${var} expansion and
//     the RM address lists of HA.
//
// Seams: the mechanism interface in sasl.go is where GSSAPI (Kerberos) and the auth-int/auth-conf
// qualities of protection (wrap/unwrap of every message) plug in; today a server or a
// hadoop.rpc.protection that requires them fails the handshake with an error saying so. The
// generated messages live in the hadooppb sub-package; the rpctest sub-package is an in-process fake
// server for tests.
//
// Retries: a Client re-sends a call only when the server provably did not process it (dial failure,
// handshake failure, StandbyException, RetriableException, a connection closed before the request was
// written) or when the method is listed in ClientOptions.IdempotentMethods.
package yarnrpc
