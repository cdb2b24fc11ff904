package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and revision are set at build time with -ldflags "-X main.version=... -X main.revision=..."
// (the Makefile does); without them, revision falls back to the Go toolchain's VCS stamp.
var (
	version  = "dev"
	revision = ""
)

const versionUsage = `Usage: yarn-am version

Prints the yarn-am version, the VCS revision it was built from and the Go version.`

func init() {
	register(&command{
		name:    "version",
		summary: "print the yarn-am version",
		usage:   versionUsage,
		run: func(args []string, stdout, stderr io.Writer) int {
			fs := flag.NewFlagSet("version", flag.ContinueOnError)
			if _, code, ok := parseCommand(fs, args, "version", versionUsage, 0, "", stdout, stderr); !ok {
				return code
			}
			fmt.Fprintf(stdout, "yarn-am %s (revision %s, %s %s/%s)\n", version, buildRevision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return 0
		},
	})
}

// buildRevision is the commit yarn-am was built from: the -X stamp, else the toolchain's
// vcs.revision (with "+dirty" when vcs.modified), else "unknown".
func buildRevision() string {
	if revision != "" {
		return revision
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
