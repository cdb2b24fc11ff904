// Package driverclient is the Go client of the yarn-am ApplicationMaster's driver API, for job
// drivers written in Go (driver mode runs them in the AM container with YARN_AM_API, YARN_AM_SECRET
// and YARN_AM_CA_CERT set). It talks HTTPS to the AM, trusting only the application's TLS authority
// (Client.Trust; FromEnv does it), and never sends the secret to an http:// URL or an unpinned
// server; reads (the status, the event stream) carry it to the pinned AM, which then shows the failed
// workers' and the driver's stderr tails. It reads the application's status and containers (with their GPU indexes),
// declares the number of TaskExecutors wanted (PUT /api/v1/requirements, with the secret), and follows
// the event stream (Server-Sent Events), reconnecting with Last-Event-ID so no event is lost or seen
// twice across a dropped connection.
//
// Seams: Client.HTTP is the *http.Client used (timeouts, transports); the wire types are those of
// package contract (contract.Status, contract.Event, ...), which the AM serves, so a driver and the AM
// cannot disagree on them.
package driverclient
