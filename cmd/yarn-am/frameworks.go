package main

import (
	"flag"
	"io"

	"github.com/yarn-am/yarn-am/framework"
	_ "github.com/yarn-am/yarn-am/framework/builtin" // registers the frameworks compiled in (Flink, the gang)
)

// The frameworks' own processes (flink-jobmanager, flink-taskmanager) are subcommands like the
// others: the framework gives the name, the help and what runs; the command line (no arguments,
// --help) is parsed here.
func init() {
	for _, fc := range framework.Commands() {
		register(&command{name: fc.Name, summary: fc.Summary, usage: fc.Usage,
			run: func(args []string, stdout, stderr io.Writer) int {
				fs := flag.NewFlagSet(fc.Name, flag.ContinueOnError)
				if _, code, ok := parseCommand(fs, args, fc.Name, fc.Usage, 0, "", stdout, stderr); !ok {
					return code
				}
				return fc.Run(stdout, stderr)
			}})
	}
}
