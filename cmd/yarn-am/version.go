package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

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
			rev := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						rev = s.Value
					}
				}
			}
			fmt.Fprintf(stdout, "yarn-am %s (revision %s, %s %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return 0
		},
	})
}
