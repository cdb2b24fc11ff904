package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
)

const listUsage = `Usage: yarn-am list [--all] [--json] [--timeout D]

Lists the applications of type YARN-AM that the ResourceManager knows: by default those not yet ended
(NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING), with --all also FINISHED, FAILED and KILLED ones.

Flags:
  --all         include ended applications
  --json        print a JSON list instead of the table
  --timeout D   give up after this long (default 2m; a duration with a unit: 30s, 2m)
` + loginUsage + `

` + exitCodesUsage

func init() {
	register(&command{
		name:    "list",
		summary: "list yarn-am applications (running by default)",
		usage:   listUsage,
		run:     runList,
	})
}

func runList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	all := fs.Bool("all", false, "include ended applications")
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	if _, code, ok := parseCommand(fs, args, "list", listUsage, 0, "", stdout, stderr); !ok {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	_, rm, code := connect(lf, "list", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	views, err := client.ListApps(ctx, rm, *all)
	if err != nil {
		return fail(stderr, "list", err, 0)
	}
	client.PrintApps(stdout, views, *all, *asJSON)
	return 0
}
