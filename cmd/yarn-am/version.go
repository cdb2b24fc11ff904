package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/yarn-am/yarn-am/internal/cli"
)

// version and revision are set at build time with -ldflags "-X main.version=... -X main.revision=..."
// (the Makefile does); without them, revision falls back to the Go toolchain's VCS stamp (cli.Revision).
var (
	version  = "dev"
	revision = ""
)

var versionUsage = usage("version")

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
			fmt.Fprintf(stdout, "yarn-am %s (revision %s, %s %s/%s)\n", version, cli.Revision(revision), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return 0
		},
	})
}
