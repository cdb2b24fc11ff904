// Package logs reads a YARN application's container logs for `yarn-am logs`: the aggregated logs a
// finished application's NodeManagers wrote to the remote log directory (TFile format, Hadoop's
// default, in the directory layouts of Hadoop 3.1 through 3.4), and the live logs of a running
// application's containers from the NodeManagers' web services, optionally followed like `tail -f`.
//
// When logs cannot be had it says which case it is (aggregation off, not yet aggregated, no
// permission, the containers gone) and what to do.
package logs
