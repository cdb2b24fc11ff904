package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
)

var listUsage = usage("list")

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
