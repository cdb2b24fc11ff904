package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

const killUsage = `Usage: yarn-am kill APP_ID [--timeout D]

Kills an application (forceKillApplication), waits until the ResourceManager reports it KILLED
(printing its state as it changes), then makes sure its staging directory
/user/<user>/.yarn-am/<app id>/ is gone: the ApplicationMaster removes it when it is stopped; if the
AM never ran (or did not manage to), kill removes it.

Flags:
  --timeout D   give up after this long (default 2m)
` + loginUsage + `

Exit codes: 0 the application is KILLED (or had already ended) and its staging directory is gone,
1 otherwise, 2 usage.`

func init() {
	register(&command{
		name:    "kill",
		summary: "kill an application and remove its staging directory",
		usage:   killUsage,
		run:     runKill,
	})
}

func runKill(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kill", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	timeout := fs.Duration("timeout", 2*time.Minute, "overall timeout")
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "kill", killUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am kill: %v\n", err)
		return 2
	}
	conf, _, rm, err := connectRM(&lf, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am kill: %v\n", err)
		return 1
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := killAndWait(ctx, rm, conf, appID, stdout); err != nil {
		fmt.Fprintf(stderr, "yarn-am kill: %v\n", err)
		return 1
	}
	return 0
}

// killAndWait kills the application, waits for a terminal state and removes the staging directory if
// the AM did not.
func killAndWait(ctx context.Context, rm *yarnrpc.ApplicationClient, conf *yarnrpc.Config, appID *hadooppb.ApplicationIdProto, out io.Writer) error {
	id := yarnrpc.FormatApplicationID(appID)
	r, err := rm.GetApplicationReport(ctx, appID)
	if err != nil {
		if errors.Is(err, yarnrpc.ErrApplicationNotFound) {
			return fmt.Errorf("the ResourceManager does not know %s ('yarn-am list --all' shows what it knows)", id)
		}
		return err
	}
	user := r.GetUser()
	if isTerminal(r.GetYarnApplicationState()) {
		fmt.Fprintf(out, "%s %s had already ended: %s, final status %s\n", stamp(), id, stateName(r.GetYarnApplicationState()), finalName(r.GetFinalApplicationStatus()))
	} else {
		if _, err := rm.KillApplication(ctx, appID, "killed by "+yarnrpc.CurrentUser()+" with yarn-am kill"); err != nil {
			return fmt.Errorf("killing %s: %w", id, err)
		}
		fmt.Fprintf(out, "%s %s: kill requested (state %s)\n", stamp(), id, stateName(r.GetYarnApplicationState()))
		last := r.GetYarnApplicationState()
		for !isTerminal(last) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s did not reach KILLED in time (last state %s); check with 'yarn-am status %s'", id, stateName(last), id)
			case <-time.After(500 * time.Millisecond):
			}
			r, err = rm.GetApplicationReport(ctx, appID)
			if err != nil {
				continue
			}
			if s := r.GetYarnApplicationState(); s != last {
				fmt.Fprintf(out, "%s %s %s\n", stamp(), id, stateName(s))
				last = s
			}
		}
		if last != hadooppb.YarnApplicationStateProto_KILLED {
			fmt.Fprintf(out, "%s %s ended %s (final status %s) before the kill took effect\n", stamp(), id, stateName(last), finalName(r.GetFinalApplicationStatus()))
		}
	}
	return ensureStagingGone(ctx, conf, user, id, out, 10*time.Second, false)
}

// ensureStagingGone waits up to wait for the AM to remove the staging directory, then removes it.
// quiet leaves out the line saying the directory is gone when nothing had to be done.
func ensureStagingGone(ctx context.Context, conf *yarnrpc.Config, user, id string, out io.Writer, wait time.Duration, quiet bool) error {
	fsys, err := dialStagingFS(conf, user)
	if err != nil {
		return fmt.Errorf("checking the staging directory: %w", err)
	}
	defer fsys.Close()
	dir := client.StagingDir(user, id)
	deadline := time.Now().Add(wait)
	for {
		_, err := fsys.Stat(dir)
		if errors.Is(err, os.ErrNotExist) {
			if !quiet {
				fmt.Fprintf(out, "%s staging directory %s is gone\n", stamp(), dir)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("checking the staging directory %s: %w", dir, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := client.RemoveStaging(fsys, user, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s removed the staging directory %s (the ApplicationMaster had not)\n", stamp(), dir)
	return nil
}
