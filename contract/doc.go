// Package contract is what the three processes of the one yarn-am binary agree on: the client that
// submits (container/client), the ApplicationMaster (am) and the launcher in every TaskExecutor
// container (container/launcher), plus Go drivers (am/driverclient) and workers (resources).
//
// Each item has exactly one definition, here:
//
//   - env.go: the environment variables and credential aliases one process sets and another reads,
//     and the application's type and tag.
//   - staging.go: the names of the files in the staging directory and the manifest that lists the
//     TaskExecutors' local resources (one type, validated in one place).
//   - exit.go: the launcher's exit codes (90, 91, 92), YARN's container exit statuses by name, and the
//     exit classes the AM reports.
//   - command.go: how a command line is quoted for YARN's launch script, and the TaskExecutor's
//     command line (`yarn-am launch ... -- /bin/bash -c <command>`).
//   - preemption.go: preemption warnings: the notices endpoint the launcher long-polls, the notice
//     document, the file and signal the worker gets, the ResourceManager's wait key.
//   - api.go, events.go: the documents of the AM's HTTP API (status, counts, containers, requirements,
//     events, the launcher's report) and the resource infos workers read.
//
// Hadoop's own names (HADOOP_CONF_DIR, the site files, the host of a node address) are not here but
// in internal/hadoop, below the wire client (docs/design.md#floors).
//
// The package imports only the standard library, so a Go driver that talks to the AM links net/http
// and this package, not the AM. docs/design.md#contracts describes the contract in words.
package contract
