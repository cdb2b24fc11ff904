package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// ListApps asks the ResourceManager for the applications of type YARN-AM, newest first: those not yet
// ended, or with all every one it knows.
func ListApps(ctx context.Context, rm *yarnrpc.ApplicationClient, all bool) ([]ReportView, error) {
	req := &hadooppb.GetApplicationsRequestProto{ApplicationTypes: []string{contract.ApplicationType}}
	if !all {
		req.ApplicationStates = []hadooppb.YarnApplicationStateProto{
			hadooppb.YarnApplicationStateProto_NEW, hadooppb.YarnApplicationStateProto_NEW_SAVING,
			hadooppb.YarnApplicationStateProto_SUBMITTED, hadooppb.YarnApplicationStateProto_ACCEPTED,
			hadooppb.YarnApplicationStateProto_RUNNING,
		}
	}
	apps, err := rm.GetApplications(ctx, req)
	if err != nil {
		return nil, err
	}
	views := make([]ReportView, 0, len(apps))
	for _, a := range apps {
		views = append(views, ViewReport(a))
	}
	sort.Slice(views, func(i, j int) bool { return views[i].ID > views[j].ID })
	return views, nil
}

// PrintApps prints what ListApps found as a table, or as JSON; all says whether ended applications
// were asked for, for the line that says there are none.
func PrintApps(w io.Writer, views []ReportView, all, asJSON bool) {
	if asJSON {
		printJSON(w, views)
		return
	}
	if len(views) == 0 {
		if all {
			fmt.Fprintln(w, "no yarn-am applications")
		} else {
			fmt.Fprintln(w, "no running yarn-am applications (--all shows ended ones too)")
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APPLICATION\tNAME\tUSER\tQUEUE\tSTATE\tFINAL\tPROGRESS\tTRACKING URL")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%s\n", v.ID, Cell(v.Name), Cell(v.User), Cell(v.Queue), v.State, v.FinalStatus, v.Progress*100, Cell(v.TrackingURL))
	}
	_ = tw.Flush()
}

// printJSON writes v as indented JSON, as the commands' --json prints.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// PrintStatus prints an application's status: the ResourceManager's report and, while its AM runs,
// the AM's own view, read as the application's owner where this machine keeps its secret (the failed
// workers' and the driver's stderr tails, docs/security.md#what-anonymous-readers-see). With asJSON
// one document {"report": {...}, "am": {...}}.
func PrintStatus(ctx context.Context, w io.Writer, r *hadooppb.ApplicationReportProto, asJSON bool) {
	v := ViewReport(r)
	var am AMView
	var amErr error
	if v.AMURL != "" {
		am, amErr = OwnerReader(v.ID).Status(ctx, v.AMURL)
	}
	if asJSON {
		doc := struct {
			Report  ReportView      `json:"report"`
			AM      json.RawMessage `json:"am,omitempty"`
			AMError string          `json:"amError,omitempty"`
		}{Report: v, AM: am.Raw}
		if amErr != nil {
			doc.AMError = amErr.Error()
		}
		printJSON(w, doc)
		return
	}
	PrintReport(w, v)
	switch {
	case amErr != nil:
		PrintAMUnreachable(w, v.AMURL, amErr)
	case am.Status != nil:
		PrintAMView(w, am)
	}
}

// PrintClusterView prints the cluster's view (ReadCluster) as a table, or as JSON.
func PrintClusterView(w io.Writer, v *ClusterView, asJSON bool) {
	if asJSON {
		printJSON(w, v)
		return
	}
	PrintCluster(w, v)
}
