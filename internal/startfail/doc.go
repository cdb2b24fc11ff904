// Package startfail says why a program could not be started when the kernel's answer misleads: a
// script whose #! line names an interpreter missing on this node fails with "no such file or
// directory" although the script is there; a #! line written with Windows line ends names an
// interpreter ending in a carriage return; a script without a #! line fails with "exec format error".
// The launcher (the worker) and resource discovery (a custom discovery script) explain their start
// failures through Explain.
//
// It is a leaf (standard library only, docs/design.md#floors); it reads at most the first line of the
// program, bounded, and only after a start has failed.
//
// Files: startfail.go (Explain).
package startfail
