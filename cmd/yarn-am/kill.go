package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
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
	sess, rm, err := client.Connect(lf.options(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am kill: %v\n", err)
		return 1
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := sess.KillAndWait(ctx, rm, appID, stdout); err != nil {
		fmt.Fprintf(stderr, "yarn-am kill: %v\n", err)
		return 1
	}
	return 0
}
