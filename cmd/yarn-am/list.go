package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

const listUsage = `Usage: yarn-am list [--all] [--json] [--timeout D]

Lists the applications of type YARN-AM that the ResourceManager knows: by default those not yet ended
(NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING), with --all also FINISHED, FAILED and KILLED ones.

Flags:
  --all         include ended applications
  --json        print a JSON list instead of the table
  --timeout D   give up after this long (default 2m; a duration with a unit: 30s, 2m)
` + loginUsage + `

` + exitCodesUsage

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
	fs.SetOutput(io.Discard)
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
	req := &hadooppb.GetApplicationsRequestProto{ApplicationTypes: []string{contract.ApplicationType}}
	if !*all {
		req.ApplicationStates = []hadooppb.YarnApplicationStateProto{
			hadooppb.YarnApplicationStateProto_NEW, hadooppb.YarnApplicationStateProto_NEW_SAVING,
			hadooppb.YarnApplicationStateProto_SUBMITTED, hadooppb.YarnApplicationStateProto_ACCEPTED,
			hadooppb.YarnApplicationStateProto_RUNNING,
		}
	}
	apps, err := rm.GetApplications(ctx, req)
	if err != nil {
		return fail(stderr, "list", err, 0)
	}
	views := make([]client.ReportView, 0, len(apps))
	for _, a := range apps {
		views = append(views, client.ViewReport(a))
	}
	sort.Slice(views, func(i, j int) bool { return views[i].ID > views[j].ID })
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(views)
		return 0
	}
	if len(views) == 0 {
		if *all {
			fmt.Fprintln(stdout, "no yarn-am applications")
		} else {
			fmt.Fprintln(stdout, "no running yarn-am applications (--all shows ended ones too)")
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APPLICATION\tNAME\tUSER\tQUEUE\tSTATE\tFINAL\tPROGRESS\tTRACKING URL")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%s\n", v.ID, client.Cell(v.Name), client.Cell(v.User), client.Cell(v.Queue), v.State, v.FinalStatus, v.Progress*100, client.Cell(v.TrackingURL))
	}
	_ = tw.Flush()
	return 0
}
