// Package proc is yarn-am's one reader of Linux's /proc: the processes there (Pids), a process's
// stat line with its parent, process group and session (ReadStat, ParseStat: the command name is in
// parentheses and may itself hold spaces and parentheses), a field of its status file (StatusField),
// the pipes it holds open (PipeInodes), killing a process group or a session, and running a short-lived
// program in a group of its own that leaves nothing behind (RunGroup: the group killed once the
// program exited, whoever else holds its output found and killed). The launcher (its process group,
// the worker's descendants), resource discovery and the GPU sampler (RunGroup) and the AM (its peak
// memory) use it instead of parsing /proc themselves.
//
// It is a leaf (standard library only, docs/design.md#floors). Only processes this user may inspect are
// seen; a process that ends while it is read is skipped, not an error, by the walkers.
package proc
