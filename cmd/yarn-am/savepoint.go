package main

import (
	"flag"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
)

var savepointUsage = usage("savepoint")

func init() {
	register(&command{
		name:    "savepoint",
		summary: "keep a running application's state without stopping it (a Flink job's savepoint)",
		usage:   savepointUsage,
		run:     runSavepoint,
	})
}

func runSavepoint(args []string, stdout, stderr io.Writer) int {
	const name = "savepoint"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	timeout := cli.RegisterTimeout(fs, contract.DefaultStopTimeout)
	dir := fs.String("dir", "", "where the framework keeps the state")
	fc, code := frameworkCommand(fs, args, name, savepointUsage, "--dir", dir, timeout, stdout, stderr)
	if fc == nil {
		return code
	}
	defer fc.close()
	res, err := fc.c.KeepState(fc.ctx, *dir, client.AMBound(time.Duration(*timeout)))
	if err != nil {
		return fail(stderr, name, err, 0)
	}
	printKept(stdout, res.What, res.Path)
	return 0
}
