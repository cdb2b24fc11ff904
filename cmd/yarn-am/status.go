package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
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

// amStatus is the AM's GET /api/v1/status document (the client ↔ AM contract of issue 4).
type amStatus struct {
	App         string            `json:"app"`
	State       string            `json:"state"`
	Requirement json.RawMessage   `json:"requirement,omitempty"`
	Counts      amCounts          `json:"counts"`
	Containers  []amContainerView `json:"containers"`
	Diagnostics string            `json:"diagnostics,omitempty"`
	Excluded    []string          `json:"excludedNodes,omitempty"`
	Events      []amEvent         `json:"events,omitempty"`
}

// amEvent is the part of an AM event the client prints.
type amEvent struct {
	ID       uint64    `json:"id"`
	Time     time.Time `json:"time"`
	Type     string    `json:"type"`
	Severity string    `json:"severity"`
	Message  string    `json:"message"`
}

// line renders an event for a terminal: "warning not-enough-resources: ...".
func (e amEvent) line() string {
	sev := ""
	if e.Severity == "warning" || e.Severity == "error" {
		sev = strings.ToUpper(e.Severity) + " "
	}
	return sev + e.Type + ": " + e.Message
}

// statusEvents is how many of the AM's latest events status prints.
const statusEvents = 10

type amCounts struct {
	Requested int `json:"requested"`
	Allocated int `json:"allocated"`
	Running   int `json:"running"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

type amContainerView struct {
	ID          string                         `json:"id"`
	Node        string                         `json:"node"`
	State       string                         `json:"state"`
	Resources   map[string]int64               `json:"resources,omitempty"`
	Infos       map[string][]map[string]string `json:"infos,omitempty"`
	ExitStatus  *int                           `json:"exitStatus,omitempty"`
	Diagnostics string                         `json:"diagnostics,omitempty"`
}

// infosText renders a container's infos as gpu=0,1 (the "index" property, else every property).
func (c amContainerView) infosText() string {
	names := make([]string, 0, len(c.Infos))
	for n := range c.Infos {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		var vals []string
		for _, info := range c.Infos[n] {
			if v, ok := info["index"]; ok {
				vals = append(vals, v)
				continue
			}
			keys := make([]string, 0, len(info))
			for k := range info {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+":"+info[k])
			}
			vals = append(vals, strings.Join(kv, "/"))
		}
		parts = append(parts, n+"="+strings.Join(vals, ","))
	}
	return strings.Join(parts, " ")
}

// reportView is the part of the RM's application report status shows.
type reportView struct {
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
}

func stateName(s hadooppb.YarnApplicationStateProto) string { return s.String() }

func finalName(s hadooppb.FinalApplicationStatusProto) string {
	return strings.TrimPrefix(s.String(), "APP_")
}

func viewReport(r *hadooppb.ApplicationReportProto) reportView {
	return reportView{
		ID: yarnrpc.FormatApplicationID(r.GetApplicationId()), Name: r.GetName(), Type: r.GetApplicationType(),
		User: r.GetUser(), Queue: r.GetQueue(), State: stateName(r.GetYarnApplicationState()),
		FinalStatus: finalName(r.GetFinalApplicationStatus()), Progress: r.GetProgress(),
		TrackingURL: r.GetTrackingUrl(), AMURL: amURL(r), Tags: r.GetApplicationTags(),
		StartTime: r.GetStartTime(), FinishTime: r.GetFinishTime(), Diagnostics: diagnostics(r),
	}
}

func diagnostics(r *hadooppb.ApplicationReportProto) string {
	d := strings.TrimSpace(r.GetDiagnostics())
	if d == "N/A" {
		return ""
	}
	return d
}

// amURL is the AM's own HTTP address while it runs: the original tracking URL it registered, else
// host and rpc port (the AM registers its HTTP port as rpc_port); "" when the AM has not registered.
func amURL(r *hadooppb.ApplicationReportProto) string {
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

// fetchAMStatus reads the AM's /api/v1/status.
func fetchAMStatus(ctx context.Context, base string) (*amStatus, json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"api/v1/status", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := amHTTP.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %sapi/v1/status: %s", base, resp.Status)
	}
	var st amStatus
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, nil, fmt.Errorf("GET %sapi/v1/status: not the AM's status document: %w", base, err)
	}
	return &st, body, nil
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
	rm, err := newClientRM(&lf, stderr)
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
	v := viewReport(r)
	var am *amStatus
	var raw json.RawMessage
	var amErr error
	if v.AMURL != "" {
		am, raw, amErr = fetchAMStatus(ctx, v.AMURL)
	}
	if *asJSON {
		doc := struct {
			Report  reportView      `json:"report"`
			AM      json.RawMessage `json:"am,omitempty"`
			AMError string          `json:"amError,omitempty"`
		}{Report: v, AM: raw}
		if amErr != nil {
			doc.AMError = amErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(doc)
		return 0
	}
	printReport(stdout, v)
	switch {
	case amErr != nil:
		fmt.Fprintf(stdout, "AM:           not reachable at %s (%v)\n", v.AMURL, amErr)
	case am != nil:
		printAMStatus(stdout, am)
	}
	return 0
}

func printReport(w io.Writer, v reportView) {
	fmt.Fprintf(w, "Application:  %s (%s)\n", v.ID, v.Name)
	fmt.Fprintf(w, "State:        %s, final status %s, progress %.0f%%\n", v.State, v.FinalStatus, v.Progress*100)
	fmt.Fprintf(w, "User/queue:   %s / %s\n", v.User, v.Queue)
	if v.TrackingURL != "" {
		fmt.Fprintf(w, "Tracking URL: %s\n", v.TrackingURL)
	}
	if v.AMURL != "" {
		fmt.Fprintf(w, "AM:           %s\n", v.AMURL)
	}
	if v.StartTime > 0 {
		fmt.Fprintf(w, "Started:      %s\n", time.UnixMilli(v.StartTime).UTC().Format(time.RFC3339))
	}
	if v.FinishTime > 0 {
		fmt.Fprintf(w, "Finished:     %s\n", time.UnixMilli(v.FinishTime).UTC().Format(time.RFC3339))
	}
	if v.Diagnostics != "" {
		fmt.Fprintf(w, "Diagnostics:  %s\n", strings.ReplaceAll(v.Diagnostics, "\n", "\n              "))
	}
}

func printAMStatus(w io.Writer, am *amStatus) {
	c := am.Counts
	fmt.Fprintf(w, "AM state:     %s\n", am.State)
	fmt.Fprintf(w, "Containers:   requested %d, allocated %d, running %d, completed %d, failed %d\n",
		c.Requested, c.Allocated, c.Running, c.Completed, c.Failed)
	if am.Diagnostics != "" {
		fmt.Fprintf(w, "AM says:      %s\n", am.Diagnostics)
	}
	if len(am.Excluded) > 0 {
		fmt.Fprintf(w, "Excluded:     %s (after repeated failures)\n", strings.Join(am.Excluded, ", "))
	}
	defer printEvents(w, am.Events)
	if len(am.Containers) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTAINER\tNODE\tSTATE\tRESOURCES\tINFOS\tEXIT\tDIAGNOSTICS")
	for _, ct := range am.Containers {
		exit := ""
		if ct.ExitStatus != nil {
			exit = fmt.Sprint(*ct.ExitStatus)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ct.ID, ct.Node, ct.State, resourcesText(ct.Resources),
			ct.infosText(), exit, firstLineOf(ct.Diagnostics))
	}
	_ = tw.Flush()
}

// printEvents prints the latest events, oldest first.
func printEvents(w io.Writer, evs []amEvent) {
	if len(evs) == 0 {
		return
	}
	if len(evs) > statusEvents {
		evs = evs[len(evs)-statusEvents:]
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Latest events:")
	for _, e := range evs {
		fmt.Fprintf(w, "  %s #%d %s\n", e.Time.Local().Format("15:04:05"), e.ID, e.line())
	}
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

// followResult is how following an application ended.
type followResult struct {
	report *hadooppb.ApplicationReportProto // the last report (terminal unless err or interrupted)
	err    error
}

func isTerminal(s hadooppb.YarnApplicationStateProto) bool {
	switch s {
	case hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED,
		hadooppb.YarnApplicationStateProto_KILLED:
		return true
	}
	return false
}

// exitCode prints the outcome and returns 0 only for FINISHED with final status SUCCEEDED.
func (f followResult) exitCode(stdout, stderr io.Writer) int {
	r := f.report
	id := yarnrpc.FormatApplicationID(r.GetApplicationId())
	st, fin := stateName(r.GetYarnApplicationState()), finalName(r.GetFinalApplicationStatus())
	if r.GetYarnApplicationState() == hadooppb.YarnApplicationStateProto_FINISHED &&
		r.GetFinalApplicationStatus() == hadooppb.FinalApplicationStatusProto_APP_SUCCEEDED {
		fmt.Fprintf(stdout, "%s %s: final status SUCCEEDED\n", stamp(), id)
		return 0
	}
	d := diagnostics(r)
	if d == "" {
		d = "(no diagnostics)"
	}
	fmt.Fprintf(stderr, "yarn-am submit: %s ended %s with final status %s: %s\n", id, st, fin, d)
	return 1
}

func stamp() string { return time.Now().Format("15:04:05") }

// follow polls the RM (and the AM while it runs) about once a second and prints what changed, until
// the application reaches a terminal state or ctx ends.
func follow(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, w io.Writer) followResult {
	id := yarnrpc.FormatApplicationID(appID)
	out := &lockedWriter{w: w}
	events := &eventFollower{out: out}
	defer events.stop()
	var (
		last      *hadooppb.ApplicationReportProto
		lastState string
		lastDiag  string
		lastURL   string
		lastCount amCounts
		seenCount bool
		lastAMSt  string
		lastAMDg  string
		lastCt    = map[string]string{}
		failures  int
	)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		r, err := rm.GetApplicationReport(callCtx, appID)
		cancel()
		if ctx.Err() != nil {
			return followResult{report: last, err: ctx.Err()}
		}
		if err != nil {
			failures++
			if failures >= 30 {
				return followResult{report: last, err: err}
			}
		} else {
			failures = 0
			last = r
			state := stateName(r.GetYarnApplicationState())
			if state != lastState {
				line := fmt.Sprintf("%s %s %s", stamp(), id, state)
				if state == "ACCEPTED" || state == "SUBMITTED" {
					line += " (waiting for the ApplicationMaster's container)"
				}
				fmt.Fprintln(out, line)
				lastState = state
			}
			if d := diagnostics(r); d != "" && d != lastDiag && !isTerminal(r.GetYarnApplicationState()) {
				fmt.Fprintf(out, "%s   RM: %s\n", stamp(), shorten(firstLineOf(d), 240))
				lastDiag = d
			}
			if u := r.GetTrackingUrl(); u != "" && u != "N/A" && u != lastURL && r.GetYarnApplicationState() == hadooppb.YarnApplicationStateProto_RUNNING {
				fmt.Fprintf(out, "%s   tracking URL %s\n", stamp(), u)
				lastURL = u
			}
			if base := amURL(r); base != "" {
				events.start(ctx, base)
				actx, acancel := context.WithTimeout(ctx, 3*time.Second)
				am, _, aerr := fetchAMStatus(actx, base)
				acancel()
				if aerr == nil {
					if !seenCount || am.Counts != lastCount {
						c := am.Counts
						fmt.Fprintf(out, "%s   containers: requested %d, allocated %d, running %d, completed %d, failed %d\n",
							stamp(), c.Requested, c.Allocated, c.Running, c.Completed, c.Failed)
						lastCount, seenCount = c, true
					}
					if am.State != "" && am.State != lastAMSt {
						fmt.Fprintf(out, "%s   AM: %s\n", stamp(), am.State)
						lastAMSt = am.State
					}
					if am.Diagnostics != "" && am.Diagnostics != lastAMDg {
						fmt.Fprintf(out, "%s   AM: %s\n", stamp(), firstLineOf(am.Diagnostics))
						lastAMDg = am.Diagnostics
					}
					for _, ct := range am.Containers {
						if events.streaming() {
							break // the event stream says the same, and more
						}
						line := fmt.Sprintf("%s on %s %s", ct.ID, ct.Node, ct.State)
						if t := ct.infosText(); t != "" {
							line += " " + t
						}
						if ct.ExitStatus != nil {
							line += fmt.Sprintf(" exit %d", *ct.ExitStatus)
						}
						if d := firstLineOf(ct.Diagnostics); d != "" && ct.ExitStatus != nil && *ct.ExitStatus != 0 {
							line += ": " + d
						}
						if lastCt[ct.ID] != line {
							fmt.Fprintf(out, "%s   container %s\n", stamp(), line)
							lastCt[ct.ID] = line
						}
					}
				}
			}
			if isTerminal(r.GetYarnApplicationState()) {
				return followResult{report: r}
			}
		}
		select {
		case <-ctx.Done():
			return followResult{report: last, err: ctx.Err()}
		case <-tick.C:
		}
	}
}

// lockedWriter serialises the lines of the status poller and the event stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// eventFollower prints the AM's events from its Server-Sent Events stream while the application
// runs. Until the first event arrives (or if the AM has no stream), follow prints container lines
// from polling the status instead.
type eventFollower struct {
	out    io.Writer
	base   string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	got    bool
}

func (f *eventFollower) streaming() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got
}

// start connects to the AM at base (once per AM address; a new attempt's AM gets a new stream).
func (f *eventFollower) start(ctx context.Context, base string) {
	if base == f.base {
		return
	}
	f.stop()
	f.base = base
	c, err := driverclient.New(base+"api/v1/", "")
	if err != nil {
		return
	}
	c.HTTP = &http.Client{Transport: &http.Transport{Proxy: nil}}
	sctx, cancel := context.WithCancel(ctx)
	f.cancel, f.done = cancel, make(chan struct{})
	go func() {
		defer close(f.done)
		s := c.Events(sctx, 0)
		s.GiveUpAfter = 10 * time.Second
		defer s.Close()
		for {
			e, err := s.Next()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.got = true
			f.mu.Unlock()
			ev := amEvent{ID: e.ID, Time: e.Time, Type: string(e.Type), Severity: e.Severity, Message: e.Message}
			fmt.Fprintf(f.out, "%s   %s\n", e.Time.Local().Format("15:04:05"), ev.line())
		}
	}()
}

// stop ends the stream and waits for its printer.
func (f *eventFollower) stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
		f.cancel = nil
	}
}
