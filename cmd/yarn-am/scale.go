package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

var scaleUsage = usage("scale")

func init() {
	register(&command{
		name:    "scale",
		summary: "change the number of TaskExecutors of a running application",
		usage:   scaleUsage,
		run:     runScale,
	})
}

func runScale(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	timeout := registerTimeout(fs)
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "scale", scaleUsage, 2, "an application id and a number of TaskExecutors", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usageError(stderr, "scale", err)
	}
	n, err := strconv.Atoi(pos[1])
	if err != nil || n < 0 || n > 100000 {
		return usageError(stderr, "scale", fmt.Errorf("N = %q: want a number of TaskExecutors from 0 to 100000", cli.Short(pos[1])))
	}
	secret, ca, err := client.LoadAppSecret(pos[0])
	if err != nil {
		return fail(stderr, "scale", err, contract.ExitInvalidInput)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeout))
	defer cancel()
	_, rm, code := connect(lf, "scale", stderr)
	if code != 0 {
		return code
	}
	defer rm.Close()
	c, st, err := client.AMClient(ctx, rm, appID, pos[0], secret, ca)
	if err != nil {
		return fail(stderr, "scale", err, 0)
	}
	req, err := c.SetRequirements(ctx, n)
	if err != nil {
		return fail(stderr, "scale", err, 0)
	}
	fmt.Fprintf(stdout, "%s: %d TaskExecutor(s) wanted (was %d)\n", pos[0], req.Instances, st.Requirement.Instances)
	if req.Note != "" {
		fmt.Fprintf(stdout, "%s: %s\n", pos[0], req.Note)
	}
	return 0
}
