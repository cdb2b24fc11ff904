package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/cli"
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
	timeout := cli.RegisterTimeout(fs, contract.DefaultStopTimeout)
	dir := fs.String("dir", "", "savepoint directory")
	fc, code := frameworkCommand(fs, args, name, savepointUsage, "--dir", dir, timeout, stdout, stderr)
	if fc == nil {
		return code
	}
	defer fc.close()
	path, err := fc.c.Savepoint(fc.ctx, *dir, client.AMBound(time.Duration(*timeout)))
	if err != nil {
		return fail(stderr, name, err, 0)
	}
	fmt.Fprintf(stdout, "Savepoint: %s\n", client.Sanitize(path))
	return 0
}
