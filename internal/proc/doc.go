// Package proc is yarn-am's one reader of Linux's /proc: the processes there (Pids), a process's
// stat line with its parent, process group and session (ReadStat, ParseStat: the command name is in
// parentheses and may itself hold spaces and parentheses), a field of its status file (StatusField),
// the pipes it holds open (PipeInodes), and killing a process group or a session. The launcher (its
// process group, the worker's descendants), resource discovery (the holders of a discovery program's
// output) and the AM (its peak memory) use it instead of parsing /proc themselves.
//
// It is a leaf (standard library only, docs/design.md#floors). Only processes this user may inspect are
// seen; a process that ends while it is read is skipped, not an error, by the walkers.
package proc
