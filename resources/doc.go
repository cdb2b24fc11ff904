// Package resources is yarn-am's external-resource framework without any cluster: it reads the
// Flink-style external-resource keys (docs/job-file.md) from a flink-conf.yaml / config.yaml, a job.toml and
// -D flags, validates them strictly (every problem at once, each naming key, value and what is valid),
// maps them to YARN resource types, checks a request against a cluster before asking (Preflight), and
// defines what a worker receives (external-resources.json and its environment, docs/gpus.md) together
// with a small Go API for workers to read it.
//
// Seams:
//   - Drivers: a Driver discovers the devices of one resource inside a container. Drivers register by
//     name (RegisterDriver, RegisterAlias) the way database/sql drivers do; the configuration key
//     external-resource.<name>.driver-factory.class selects one. This package registers the "exec"
//     driver (any program with the discovery-script contract); the gpu package registers "gpu".
//   - Discovery programs run through RunDiscoveryWith (argv splitting as a shell would, first-line
//     parsing, ids checked against an IDRule, stdout and stderr capped at 64 KiB, the process group
//     killed on timeout and when done, stderr in errors), shared by the exec driver (ExecIDRule) and the
//     GPU driver (gpu.IndexRule).
//   - Cluster facts enter Preflight as plain values (ClusterInfo), so the client fetches them over RPC
//     and tests build them by hand.
//
// Files: config.go (types, Parse, validation), sources.go (Load: yaml, toml, -D), yarn.go (mapping and
// Preflight), discovery.go and exec_driver.go (running discovery programs), info.go (worker side).
package resources
