package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// ReportView is the part of the RM's application report that status shows (and prints as JSON).
type ReportView struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	User        string   `json:"user"`
	Queue       string   `json:"queue"`
	State       string   `json:"state"`
	FinalStatus string   `json:"finalStatus"`
	Progress    float32  `json:"progress"`
	TrackingURL string   `json:"trackingUrl,omitempty"`
	AMURL       string   `json:"amUrl,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	StartTime   int64    `json:"startTime,omitempty"`
	FinishTime  int64    `json:"finishTime,omitempty"`
	Diagnostics string   `json:"diagnostics,omitempty"`
	// LogAggregation is the RM's log aggregation status (DISABLED, NOT_START, RUNNING, SUCCEEDED,
	// FAILED, TIME_OUT, RUNNING_WITH_FAILURE); "" when the RM does not report it.
	LogAggregation string `json:"logAggregation,omitempty"`
}

// StateName is an application state as YARN names it (RUNNING, FINISHED, ...).
func StateName(s hadooppb.YarnApplicationStateProto) string { return s.String() }

// FinalName is a final status as YARN prints it (SUCCEEDED, FAILED, KILLED, UNDEFINED).
func FinalName(s hadooppb.FinalApplicationStatusProto) string {
	return strings.TrimPrefix(s.String(), "APP_")
}

// IsTerminal reports whether an application in state s has ended.
func IsTerminal(s hadooppb.YarnApplicationStateProto) bool {
	switch s {
	case hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED,
		hadooppb.YarnApplicationStateProto_KILLED:
		return true
	}
	return false
}

// ViewReport is the view of an application report.
func ViewReport(r *hadooppb.ApplicationReportProto) ReportView {
	return ReportView{
		ID: yarnrpc.FormatApplicationID(r.GetApplicationId()), Name: r.GetName(), Type: r.GetApplicationType(),
		User: r.GetUser(), Queue: r.GetQueue(), State: StateName(r.GetYarnApplicationState()),
		FinalStatus: FinalName(r.GetFinalApplicationStatus()), Progress: r.GetProgress(),
		TrackingURL: r.GetTrackingUrl(), AMURL: AMURL(r), Tags: r.GetApplicationTags(),
		StartTime: r.GetStartTime(), FinishTime: r.GetFinishTime(), Diagnostics: Diagnostics(r),
		LogAggregation: logAggregationName(r),
	}
}

func logAggregationName(r *hadooppb.ApplicationReportProto) string {
	if r.LogAggregationStatus == nil {
		return ""
	}
	return strings.TrimPrefix(r.GetLogAggregationStatus().String(), "LOG_")
}

// Diagnostics are the report's diagnostics, "" for none ("N/A").
func Diagnostics(r *hadooppb.ApplicationReportProto) string {
	d := strings.TrimSpace(r.GetDiagnostics())
	if d == "N/A" {
		return ""
	}
	return d
}

// AMURL is the AM's own HTTP address while it runs: the original tracking URL it registered, else
// host and rpc port (the AM registers its HTTP port as rpc_port); "" when the AM has not registered.
func AMURL(r *hadooppb.ApplicationReportProto) string {
	if r.GetYarnApplicationState() != hadooppb.YarnApplicationStateProto_RUNNING {
		return ""
	}
	if u := r.GetOriginalTrackingUrl(); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return strings.TrimSuffix(u, "/") + "/"
	}
	if h := r.GetHost(); h != "" && h != "N/A" && r.GetRpcPort() > 0 {
		return fmt.Sprintf("http://%s:%d/", h, r.GetRpcPort())
	}
	return ""
}

// amHTTP talks to AMs directly: they listen on cluster-internal addresses, so no proxy.
var amHTTP = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 3 * time.Second}

// FetchAMStatus reads the AM's /api/v1/status at base (the AM's URL), decoded and as sent, through
// driverclient, the one client of the AM's API.
func FetchAMStatus(ctx context.Context, base string) (*contract.Status, json.RawMessage, error) {
	c, err := driverclient.New(base+"api/v1/", "")
	if err != nil {
		return nil, nil, fmt.Errorf("the AM's URL %s: not an http:// or https:// URL", shorten(base, 120))
	}
	c.HTTP, c.CallTimeout = amHTTP, amHTTP.Timeout
	st, raw, err := c.StatusDocument(ctx)
	if err != nil {
		return nil, nil, err
	}
	return &st, raw, nil
}

// PrintReport prints the RM's view of an application.
func PrintReport(w io.Writer, v ReportView) {
	fmt.Fprintf(w, "Application:  %s (%s)\n", v.ID, Sanitize(v.Name))
	fmt.Fprintf(w, "State:        %s, final status %s, progress %.0f%%\n", v.State, v.FinalStatus, v.Progress*100)
	fmt.Fprintf(w, "User/queue:   %s / %s\n", Sanitize(v.User), Sanitize(v.Queue))
	if v.TrackingURL != "" {
		fmt.Fprintf(w, "Tracking URL: %s\n", Sanitize(v.TrackingURL))
	}
	if v.AMURL != "" {
		fmt.Fprintf(w, "AM:           %s\n", Sanitize(v.AMURL))
	}
	if v.StartTime > 0 {
		fmt.Fprintf(w, "Started:      %s\n", time.UnixMilli(v.StartTime).UTC().Format(time.RFC3339))
	}
	if v.FinishTime > 0 {
		fmt.Fprintf(w, "Finished:     %s\n", time.UnixMilli(v.FinishTime).UTC().Format(time.RFC3339))
	}
	if v.Diagnostics != "" {
		fmt.Fprintf(w, "Diagnostics:  %s\n", strings.ReplaceAll(Sanitize(v.Diagnostics), "\n", "\n              "))
	}
	if v.LogAggregation != "" {
		fmt.Fprintf(w, "Logs:         log aggregation %s; yarn-am logs %s\n", v.LogAggregation, v.ID)
	}
}

// CountsLine renders the container counts; stopping ones only when there are any.
func CountsLine(c contract.Counts) string {
	s := fmt.Sprintf("requested %d, allocated %d, running %d", c.Requested, c.Allocated, c.Running)
	if c.Stopping > 0 {
		s += fmt.Sprintf(", stopping %d", c.Stopping)
	}
	return s + fmt.Sprintf(", completed %d, failed %d", c.Completed, c.Failed)
}

// PrintAMStatus prints the AM's view: its state, the counts, every listed container and the latest
// events.
func PrintAMStatus(w io.Writer, st *contract.Status) {
	fmt.Fprintf(w, "AM state:     %s\n", Sanitize(string(st.State)))
	fmt.Fprintf(w, "Containers:   %s\n", CountsLine(st.Counts))
	for _, l := range st.Links {
		line := fmt.Sprintf("%-13s %s", Sanitize(l.Name)+":", Sanitize(l.URL))
		if l.Note != "" {
			line += " (" + Sanitize(l.Note) + ")"
		}
		fmt.Fprintln(w, line)
	}
	printFramework(w, st.Framework) // frameworkview.go
	if st.Diagnostics != "" {
		fmt.Fprintf(w, "AM says:      %s\n", Sanitize(st.Diagnostics))
	}
	if len(st.Exclusions) > 0 {
		var l []string
		for _, e := range st.Exclusions {
			why := "after repeated failures"
			if e.Reason == contract.ExclusionLost {
				why = "lost a TaskExecutor; until it is healthy again"
			}
			l = append(l, e.Node+" ("+why+")")
		}
		fmt.Fprintf(w, "Excluded:     %s\n", Sanitize(strings.Join(l, ", ")))
	} else if len(st.ExcludedNodes) > 0 { // an AM of an earlier release: no reasons
		fmt.Fprintf(w, "Excluded:     %s (after repeated failures)\n", Sanitize(strings.Join(st.ExcludedNodes, ", ")))
	}
	if st.Gang != nil {
		fmt.Fprintf(w, "Gang:         %s\n", gangLine(*st.Gang))
	}
	if st.GPUUsage != nil {
		fmt.Fprintf(w, "GPU time:     %s\n", GPUUsageLine(*st.GPUUsage))
	}
	defer printEvents(w, st.Events)
	defer printStderrTails(w, st) // under the table, above the events
	if len(st.Containers) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	gpus := anyGPUs(st) // the GPU UTIL column (gpuview.go), only where something was sampled
	if gpus {
		fmt.Fprintln(tw, "CONTAINER\tNODE\tSTATE\tRESOURCES\tINFOS\tGPU UTIL\tEXIT\tDIAGNOSTICS")
	} else {
		fmt.Fprintln(tw, "CONTAINER\tNODE\tSTATE\tRESOURCES\tINFOS\tEXIT\tDIAGNOSTICS")
	}
	for _, ct := range st.Containers {
		exit := ""
		if ct.ExitStatus != nil {
			exit = fmt.Sprint(*ct.ExitStatus)
		}
		infos := Cell(InfosText(ct.Infos))
		if gpus {
			infos += "\t" + Cell(GPUText(ct.GPUs))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", Cell(ct.ID), Cell(ct.Node), Cell(string(ct.State)), Cell(resourcesText(ct.Resources)),
			infos, exit, Cell(firstLineOf(ct.Diagnostics)))
	}
	_ = tw.Flush()
}

// gangLine says where a gang's current round stands (docs/running.md#elastic-gangs): its size once it
// formed, what it holds, and an elastic gang's bounds.
func gangLine(g contract.GangStatus) string {
	var b strings.Builder
	if g.Formed {
		fmt.Fprintf(&b, "round %d running with %d TaskExecutors (WORLD_SIZE %d)", g.Round, g.Size, g.Size)
	} else {
		fmt.Fprintf(&b, "round %d forming", g.Round)
	}
	if g.MinInstances < g.MaxInstances {
		fmt.Fprintf(&b, "; elastic: %d to %d", g.MinInstances, g.MaxInstances)
	}
	if g.Held > 0 {
		fmt.Fprintf(&b, "; %d held", g.Held)
	}
	return b.String()
}

// statusEvents is how many of the AM's latest events status prints.
const statusEvents = 10

// printEvents prints the latest events, oldest first.
func printEvents(w io.Writer, evs []contract.Event) {
	if len(evs) == 0 {
		return
	}
	if len(evs) > statusEvents {
		evs = evs[len(evs)-statusEvents:]
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Latest events:")
	for _, e := range evs {
		fmt.Fprintf(w, "  %s #%d %s\n", e.Time.Local().Format("15:04:05"), e.ID, EventLine(e))
	}
}

// EventLine renders an event for a terminal: "WARNING not-enough-resources: ...", sanitized.
func EventLine(e contract.Event) string {
	sev := ""
	if e.Severity == contract.SeverityWarning || e.Severity == contract.SeverityError {
		sev = strings.ToUpper(e.Severity) + " "
	}
	line := sev + string(e.Type) + ": " + e.Message
	if e.Detail != "" { // the owner's: what anonymous readers do not get (docs/security.md#what-anonymous-readers-see)
		line += ": " + e.Detail
	}
	return Sanitize(line)
}

// Cell is a sanitized table cell: on one line, without tabs (they would shift the columns).
func Cell(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(Sanitize(s))
}

// InfosText renders a container's infos as gpu=0,1 (the "index" property, else every property); the
// caller sanitizes it for a terminal.
func InfosText(infos map[string][]contract.Info) string {
	names := make([]string, 0, len(infos))
	for n := range infos {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		var vals []string
		for _, info := range infos[n] {
			if v, ok := info[contract.InfoIndex]; ok {
				vals = append(vals, v)
				continue
			}
			var kv []string
			for _, k := range info.Keys() {
				kv = append(kv, k+":"+info[k])
			}
			vals = append(vals, strings.Join(kv, "/"))
		}
		parts = append(parts, n+"="+strings.Join(vals, ","))
	}
	return strings.Join(parts, " ")
}

func resourcesText(r map[string]int64) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if r[k] != 0 { // resource types the container did not ask for
			parts = append(parts, fmt.Sprintf("%s=%d", k, r[k]))
		}
	}
	return strings.Join(parts, ",")
}

// shorten cuts s to n runes, marking the cut.
// PrintAMUnreachable prints status's line for an AM whose status could not be read; the URL (from the
// RM's report) and the error (with the AM's reason phrase) are bounded and sanitized.
func PrintAMUnreachable(w io.Writer, amURL string, err error) {
	fmt.Fprintf(w, "AM:           not reachable at %s (%s)\n", Sanitize(shorten(amURL, 240)), Sanitize(shorten(err.Error(), 400)))
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + " ..."
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// Stamp is the time prefix of the attached view's lines.
func Stamp() string { return time.Now().Format("15:04:05") }
