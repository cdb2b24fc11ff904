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

const scaleUsage = `Usage: yarn-am scale APP_ID N [--timeout D]

Sets the number of TaskExecutors a running application wants to N (0 to 100000), as the driver API's
PUT /api/v1/requirements does: the AM asks YARN for more, or cancels pending asks and then stops the
newest TaskExecutors. A job's framework may refuse a change it cannot follow, saying what would
work: for a [flink] job each TaskExecutor is a Flink TaskManager; with scheduler-mode: reactive the
job's parallelism follows both ways, a session cluster takes more TaskManagers but not fewer, and a
job whose parallelism is fixed refuses both (docs/flink.md#reactive-scaling). A framework may also
take a change and carry it out later: with [flink] taskmanagers = "demand" on the adaptive scheduler,
N sets the job's parallelism, and fewer TaskManagers go once the job has rescaled away from them;
scale then prints the count unchanged and the framework's note (docs/flink.md#taskmanagers-on-demand).

The AM takes the change only over its HTTPS API with the application's secret. submit keeps the
secret and the TLS authority's certificate of each application it submits in
$YARN_AM_CONFIG_DIR/apps/<APP_ID>/ (default: ~/.config/yarn-am/apps/<APP_ID>/, readable by the
submitting user alone), so scale works for that user on that machine; elsewhere it exits 3.

Flags:
  --timeout D   give up after this long (default 2m; a duration with a unit: 30s, 2m)
` + loginUsage + `

Exit 0: the AM took the new number (printed). An application the ResourceManager does not know
exits 5; one whose AM does not run or refuses the change exits 1.
` + exitCodesUsage

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
