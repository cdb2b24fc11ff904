package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/am/contract"
	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

const statusUsage = `Usage: yarn-am status APP_ID [--json] [--timeout D]

Shows an application from the ResourceManager's report (state, final status, queue, tracking URL,
diagnostics) and, while its ApplicationMaster runs, the AM's own view from its /api/v1/status: the
container counts (requested, allocated, running, completed, failed) and every container with its
node, state, resources and resource infos (the GPU indexes its launcher reported).

Flags:
  --json        print one JSON document {"report": {...}, "am": {...}} instead of text
  --timeout D   give up after this long (default 30s)
` + loginUsage + `

Exit codes: 0 shown, 1 unknown application or the RM could not be asked, 2 usage.`

func init() {
	register(&command{
		name:    "status",
		summary: "show an application: the RM's report and the AM's containers with their GPUs",
		usage:   statusUsage,
		run:     runStatus,
	})
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 30*time.Second, "overall timeout")
	var lf loginFlags
	lf.register(fs)
	pos, code, ok := parseCommand(fs, args, "status", statusUsage, 1, "one application id", stdout, stderr)
	if !ok {
		return code
	}
	appID, err := yarnrpc.ParseApplicationID(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am status: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	_, rm, err := client.Connect(lf.options(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yarn-am status: %v\n", err)
		return 1
	}
	defer rm.Close()
	r, err := rm.GetApplicationReport(ctx, appID)
	if err != nil {
		if errors.Is(err, yarnrpc.ErrApplicationNotFound) {
			fmt.Fprintf(stderr, "yarn-am status: the ResourceManager does not know %s (finished applications are forgotten after a while; 'yarn-am list --all' shows what it knows)\n", pos[0])
			return 1
		}
		fmt.Fprintf(stderr, "yarn-am status: %v\n", err)
		return 1
	}
	v := client.ViewReport(r)
	var am *contract.Status
	var raw json.RawMessage
	var amErr error
	if v.AMURL != "" {
		am, raw, amErr = client.FetchAMStatus(ctx, v.AMURL)
	}
	if *asJSON {
		doc := struct {
			Report  client.ReportView `json:"report"`
			AM      json.RawMessage   `json:"am,omitempty"`
			AMError string            `json:"amError,omitempty"`
		}{Report: v, AM: raw}
		if amErr != nil {
			doc.AMError = amErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(doc)
		return 0
	}
	client.PrintReport(stdout, v)
	switch {
	case amErr != nil:
		fmt.Fprintf(stdout, "AM:           not reachable at %s (%v)\n", v.AMURL, amErr)
	case am != nil:
		client.PrintAMStatus(stdout, am)
	}
	return 0
}
