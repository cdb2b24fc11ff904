package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

const savepointUsage = `Usage: yarn-am savepoint APP_ID [--dir URI] [--timeout D]

Keeps a running application's state through its framework without stopping it: a [flink] job takes
a savepoint, as flink savepoint does (the JobManager's POST /jobs/<id>/savepoints with cancel-job
false), and runs on. savepoint prints the savepoint's path. The AM records it, so that a later AM
attempt, or a JobManager restarted in place, starts from it when it is newer than the latest
checkpoint; the schedule of [flink] savepoint-interval never deletes it
(docs/flink.md#savepoints-on-a-schedule). The next submit can start from it: [flink] restore =
"<path>". A framework that keeps no state on demand (a plain job, a training gang, a Flink session
cluster) is refused.

The AM takes it only over its HTTPS API with the application's secret (POST /api/v1/savepoint),
which submit keeps in $YARN_AM_CONFIG_DIR/apps/<APP_ID>/ as for stop; elsewhere savepoint exits 3.

Flags:
  --dir URI         where the savepoint goes: a directory the JobManager can write, as a URI or an
                    absolute path (file:///tmp/savepoints; default: the job's state.savepoints.dir,
                    else savepoint refuses naming this flag); hdfs://NN/savepoints on HDFS
  --timeout D       give up after this long (default 5m, at most 30m; a duration with a unit: 30s, 5m)
` + loginUsage + `

Exit 0: the savepoint was written (printed) and the job runs on. An application the
ResourceManager does not know exits 5; one whose AM does not run, or whose framework refuses or
fails the savepoint, exits 1; past --timeout 4.
` + exitCodesUsage

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
	timeout := timeoutFlag(contract.DefaultStopTimeout)
	fs.Var(&timeout, "timeout", "overall timeout")
	dir := fs.String("dir", "", "savepoint directory")
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, name, savepointUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usageError(stderr, name, err)
	}
	if err := checkDirFlag("--dir", *dir); err != nil {
		return usageError(stderr, name, err)
	}
	if d := time.Duration(timeout); d > contract.MaxStopTimeout {
		return usageError(stderr, name, fmt.Errorf("--timeout %s: at most %s (a savepoint that takes longer is better taken by Flink's own flink savepoint)", d, contract.MaxStopTimeout))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout))
	defer cancel()
	c, rm, code := frameworkClient(ctx, lf, name, pos[0], appID, stderr)
	if c == nil {
		return code
	}
	defer rm.Close()
	path, err := c.Savepoint(ctx, *dir, amBound(time.Duration(timeout)))
	if err != nil {
		return fail(stderr, name, err, 0)
	}
	fmt.Fprintf(stdout, "Savepoint: %s\n", client.Sanitize(path))
	return 0
}
