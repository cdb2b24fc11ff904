package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

const stopUsage = `Usage: yarn-am stop APP_ID [--savepoint DIR] [--timeout D]

Stops a running application gracefully through its framework, keeping its work's state: a [flink]
job stops with a savepoint, as flink stop does (the JobManager's POST /jobs/<id>/stop without
draining), ends FINISHED, and the application SUCCEEDS with the savepoint named in its
diagnostics. stop prints the savepoint's path, then waits for the application's end and prints its
final status. The next submit can start from the savepoint: [flink] restore = "<path>"
(docs/flink.md#stopping-with-a-savepoint). A framework that cannot stop gracefully (a plain job, a
training gang, a Flink session cluster) is refused: use yarn-am kill.

The AM takes the stop only over its HTTPS API with the application's secret (POST /api/v1/stop),
which submit keeps in $YARN_AM_CONFIG_DIR/apps/<APP_ID>/ as for scale; elsewhere stop exits 3.

Flags:
  --savepoint DIR   where the savepoint goes: a directory the JobManager can write, as a URI or an
                    absolute path (file:///tmp/savepoints; default: the job's state.savepoints.dir,
                    else stop refuses naming this flag); hdfs://NN/savepoints on HDFS
  --timeout D       give up after this long, the savepoint and the application's end together
                    (default 5m, at most 30m; a duration with a unit: 30s, 5m)
` + loginUsage + `

Exit 0: the savepoint was written (printed) and the application SUCCEEDED. An application the
ResourceManager does not know exits 5; one whose AM does not run, whose framework refuses or fails
the stop, or that ends otherwise exits 1; past --timeout 4.
` + exitCodesUsage

// defaultStopTimeout is --timeout's default: a savepoint of a large state takes minutes.
const defaultStopTimeout = 5 * time.Minute

func init() {
	register(&command{
		name:    "stop",
		summary: "stop a running application gracefully, keeping its state (a Flink job's savepoint)",
		usage:   stopUsage,
		run:     runStop,
	})
}

func runStop(args []string, stdout, stderr io.Writer) int {
	const name = "stop"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	timeout := timeoutFlag(defaultStopTimeout)
	fs.Var(&timeout, "timeout", "overall timeout")
	savepoint := fs.String("savepoint", "", "savepoint directory")
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, name, stopUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		return usageError(stderr, name, err)
	}
	if err := checkDirFlag("--savepoint", *savepoint); err != nil {
		return usageError(stderr, name, err)
	}
	if d := time.Duration(timeout); d > contract.MaxStopTimeout {
		return usageError(stderr, name, fmt.Errorf("--timeout %s: at most %s (a savepoint that takes longer is better taken by Flink's own flink stop)", d, contract.MaxStopTimeout))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout))
	defer cancel()
	c, rm, code := frameworkClient(ctx, lf, name, pos[0], appID, stderr)
	if c == nil {
		return code
	}
	defer rm.Close()
	// The AM's bound is a little shorter than ours, so that its answer (why it failed) comes first.
	res, err := c.Stop(ctx, *savepoint, amBound(time.Duration(timeout)))
	if err != nil {
		return fail(stderr, name, err, 0)
	}
	fmt.Fprintf(stdout, "Savepoint: %s\n", client.Sanitize(res))
	return waitEnded(ctx, rm, appID, pos[0], stdout, stderr)
}

// amBound is the AM's bound of a call the client waits timeout for: a little shorter, so that its
// answer (why it failed) comes first.
func amBound(timeout time.Duration) time.Duration {
	return max(timeout-5*time.Second, time.Second)
}

// frameworkClient is the HTTPS client of a running application's AM, with the application's
// secret, and the ResourceManager's client (the caller closes it): what stop and savepoint ask
// the application's framework through. nil and the exit code when there is none.
func frameworkClient(ctx context.Context, lf loginFlags, name, id string, appID *hadooppb.ApplicationIdProto, stderr io.Writer) (*driverclient.Client, *yarnrpc.ApplicationClient, int) {
	secret, ca, err := client.LoadAppSecret(id)
	if err != nil {
		return nil, nil, fail(stderr, name, err, contract.ExitInvalidInput)
	}
	_, rm, code := connect(lf, name, stderr)
	if code != 0 {
		return nil, nil, code
	}
	c, code := amClientOf(ctx, rm, name, id, appID, secret, ca, stderr)
	if c == nil {
		rm.Close()
		return nil, nil, code
	}
	return c, rm, 0
}

func amClientOf(ctx context.Context, rm *yarnrpc.ApplicationClient, name, id string, appID *hadooppb.ApplicationIdProto, secret string, ca []byte, stderr io.Writer) (*driverclient.Client, int) {
	r, code, ok := appReport(ctx, rm, appID, name, id, stderr)
	if !ok {
		return nil, code
	}
	v := client.ViewReport(r)
	if v.AMURL == "" {
		fmt.Fprintf(stderr, "yarn-am %s: %s is %s: its ApplicationMaster does not run\n", name, id, v.State)
		return nil, 1
	}
	st, _, err := client.FetchAMStatus(ctx, v.AMURL)
	if err != nil {
		return nil, fail(stderr, name, err, 0)
	}
	if st.SecureAPI == "" {
		fmt.Fprintf(stderr, "yarn-am %s: the AM of %s names no HTTPS API\n", name, id)
		return nil, 1
	}
	c, err := driverclient.New(st.SecureAPI, secret)
	if err != nil {
		return nil, fail(stderr, name, err, 0)
	}
	if err := c.Trust(ca); err != nil {
		return nil, fail(stderr, name, err, 0)
	}
	return c, 0
}

// checkDirFlag refuses a directory flag (stop's --savepoint, savepoint's --dir) that no framework
// can write to: it is a directory as a URI (file:///tmp/savepoints, hdfs:///savepoints) or an
// absolute path.
func checkDirFlag(flag, v string) error {
	if v == "" {
		return nil
	}
	shown := shortArg(v)
	switch {
	case len(v) > 4096:
		return fmt.Errorf("%s %q: longer than 4096 bytes", flag, shown)
	case strings.TrimSpace(v) != v || strings.ContainsAny(v, "\n\r\x00"):
		return fmt.Errorf("%s %q: a space at an end, a line break or NUL; want a directory as a URI (file:///tmp/savepoints) or an absolute path", flag, shown)
	case strings.HasPrefix(v, "/"):
		return nil
	}
	if scheme, rest, ok := strings.Cut(v, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "/:") && strings.Trim(rest, "/") != "" {
		return nil
	}
	return fmt.Errorf("%s %q: not a URI or an absolute path; want a directory the JobManager can write, e.g. file:///tmp/savepoints", flag, shown)
}

// waitEnded waits for the application's end after a stop and prints its final status: exit 0 when
// it SUCCEEDED, 1 when it ended otherwise, 4 past ctx.
func waitEnded(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, id string, stdout, stderr io.Writer) int {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		r, err := rm.GetApplicationReport(ctx, appID)
		if err == nil {
			v := client.ViewReport(r)
			switch r.GetYarnApplicationState() {
			case hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED, hadooppb.YarnApplicationStateProto_KILLED:
				line := fmt.Sprintf("%s: %s, final status %s", id, v.State, v.FinalStatus)
				if v.Diagnostics != "" {
					line += ": " + v.Diagnostics
				}
				fmt.Fprintln(stdout, client.Sanitize(line))
				if v.FinalStatus == string(contract.Succeeded) {
					return 0
				}
				return 1
			}
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "yarn-am stop: the savepoint was written, but %s has not ended within --timeout (last: %v); yarn-am status %s shows where it is\n", id, orState(err), id)
			return contract.ExitUnreachable
		case <-t.C:
		}
	}
}

func orState(err error) string {
	if err != nil {
		return err.Error()
	}
	return "still running"
}
