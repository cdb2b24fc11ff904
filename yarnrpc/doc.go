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
//   - sasl.go, digestmd5.go, gssapi.go: the SASL handshake (TOKEN via DIGEST-MD5, KERBEROS via
//     GSSAPI with mutual authentication and the server principal checked against the
//     configuration). A server that asks to fall back to SIMPLE (answers NEGOTIATE with SUCCESS, or
//     offers nothing but SIMPLE) is refused unless ipc.client.fallback-to-simple-auth-allowed=true
//     (ConnOptions.FallbackToSimpleAllowed), or, for TOKEN only, the cluster does not use Kerberos
//     (hadoop.security.authentication=simple, ConnOptions.InsecureCluster). An allowed fallback is
//     logged as a warning. A SIMPLE listed next to a mechanism the client can do is ignored.
//     DIGEST-MD5 auth-conf refuses the export-grade ciphers des, rc4-56 and rc4-40 unless
//     yarn-am.sasl.digest-md5.weak-ciphers-allowed=true (ConnOptions.WeakDigestCiphersAllowed);
//     3des and rc4 are always accepted, 3des preferred.
//   - digestmd5_layer.go, gssapi.go (wrap/unwrap), sasl_wrap.go: the auth-int and auth-conf
//     security layers of hadoop.rpc.protection=integrity/privacy; every frame after SASL, the
//     connection context and pings included, travels inside RpcSaslProto WRAP messages. A frame
//     from the server that is not a WRAP message is a fatal connection error: it may be forged.
//   - kerberos.go: Kerberos login (ticket cache or keytab, gokrb5), service tickets, _HOST in
//     server principals, the short user name of the connection context.
//   - client.go, backoff.go: Client, a connection per (address, protocol, user), reconnect with capped
//     exponential backoff and jitter, RM HA failover on connection failure and StandbyException.
//   - reach.go: fail-fast clients for commands a person waits on (ClientOptions.FailFast,
//     FailFast for the typed clients): a refused, unresolvable, HTTP (ErrHTTPServer) or standby
//     server is tried a few times within about two seconds, then the call ends with an
//     *UnreachableError naming each server, where its address came from (Config.RMEndpoints) and
//     the likely fix; a call still waiting after ProgressAfter (5 s) reports once what it waits
//     for. Without FailFast (the AM) clients stay patient, to outlive RM restarts.
//   - errors.go: the one place where Java exceptions become Go errors (RemoteError, sentinels for
//     errors.Is, ConnError).
//   - config.go: Hadoop XML configuration (HADOOP_CONF_DIR / YARN_CONF_DIR) with ${var} expansion
//     bounded as in Hadoop (one reference at a time, at most 20, self-references and cycles left as
//     written and reported by Config.Lookup, results capped at 1 MiB), the origin of each key
//     (Config.Source), and the RM address lists of HA.
//
// Seams: the mechanism interface in sasl.go (start/step/complete/qop/wrap/unwrap/maxWrap) is one SASL
// mechanism; Conn only sees it. The ticketSource interface in gssapi.go stands between GSSAPI and
// the KDC (tests mint tickets with rpctest.Kerberos instead). The generated messages live in the
// hadooppb sub-package; the rpctest sub-package is an in-process fake server for tests, with
// server-side DIGEST-MD5 and GSSAPI and their security layers written independently of the client.
//
// Retries: a Client re-sends a call only when the server provably did not process it (dial failure,
// handshake failure, StandbyException, RetriableException, a connection closed before the request was
// written) or when the method is listed in ClientOptions.IdempotentMethods.
//
// Delegation tokens: ApplicationClient.GetDelegationToken/RenewDelegationToken (RM) and
// NameNodeClient (our own few ClientNamenodeProtocol calls: delegation tokens, and getFileInfo/delete
// for an AM that only holds an HDFS token); Config.ShortNameOf applies hadoop.security.auth_to_local;
// DelegationTokenDates reads a token's maximum lifetime from its identifier.
package yarnrpc
