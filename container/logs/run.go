package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Options are what `yarn-am logs` was asked for.
type Options struct {
	App    *hadooppb.ApplicationIdProto
	Filter Filter
	Follow bool
	Poll   time.Duration // --follow's poll interval; default 1 s
	Out    io.Writer     // the logs
	Notes  io.Writer     // what the command says about them (stderr)
	// Timeout bounds each wait for the ResourceManager (--timeout; default 30 s); printing and
	// following the logs themselves are not bounded by it.
	Timeout time.Duration
}

// sanitizingWriter passes each write (one note line) through client.Sanitize.
type sanitizingWriter struct{ w io.Writer }

func (s sanitizingWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(s.w, client.Sanitize(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// NotAvailableError says why there are no logs to print and what to do.
type NotAvailableError struct{ Msg string }

func (e *NotAvailableError) Error() string { return e.Msg }

// Run prints the application's logs: aggregated from the remote log directory once it has ended,
// live from the NodeManagers while it runs (and with Follow, streams them until it ends).
func Run(ctx context.Context, sess *client.Session, rm *yarnrpc.ApplicationClient, o Options) error {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	// Every note quotes names from the files, the NodeManagers or HDFS listings (which the
	// application's owner chose): none may drive the terminal.
	o.Notes = sanitizingWriter{o.Notes}
	report, err := appReport(ctx, rm, o.App, o.Timeout)
	if err != nil {
		return err
	}
	if client.IsTerminal(report.GetYarnApplicationState()) {
		if o.Follow {
			fmt.Fprintf(o.Notes, "yarn-am logs: %s has ended (%s); printing its aggregated logs\n", yarnrpc.FormatApplicationID(o.App), client.StateName(report.GetYarnApplicationState()))
		}
		return aggregated(ctx, sess, rm, report, o)
	}
	lv := &live{rm: rm, nm: NewNM(), o: o, app: yarnrpc.FormatApplicationID(o.App), p: &Printer{W: o.Out, Tail: o.Filter.Tail}}
	rolledSoFar(ctx, sess, report, o, lv.p)
	return lv.run(ctx, report)
}

func appReport(ctx context.Context, rm *yarnrpc.ApplicationClient, app *hadooppb.ApplicationIdProto, timeout time.Duration) (*hadooppb.ApplicationReportProto, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := rm.GetApplicationReport(cctx, app)
	if err != nil {
		return nil, fmt.Errorf("asking the ResourceManager about %s: %w", yarnrpc.FormatApplicationID(app), err)
	}
	return r, nil
}

// hdfsFS reads the aggregated logs over colinmarc/hdfs.
type hdfsFS struct{ h *client.HDFS }

func (f hdfsFS) ReadDir(dir string) ([]os.FileInfo, error) { return f.h.Client.ReadDir(dir) }
func (f hdfsFS) Open(name string) (ReadAtCloser, error)    { return f.h.Client.Open(name) }

func aggStatus(r *hadooppb.ApplicationReportProto) string {
	if r.LogAggregationStatus == nil {
		return "not reported"
	}
	return strings.TrimPrefix(r.GetLogAggregationStatus().String(), "LOG_")
}

func aggregated(ctx context.Context, sess *client.Session, rm *yarnrpc.ApplicationClient, report *hadooppb.ApplicationReportProto, o Options) error {
	app := yarnrpc.FormatApplicationID(o.App)
	owner := report.GetUser()
	if owner == "" {
		owner = sess.User
	}
	cands := AppDirs(sess.Conf, owner, app, o.App.GetId())
	h, err := sess.DialStaging(sess.User)
	if err != nil {
		// colinmarc/hdfs keeps only the text of why no NameNode answered: mark it as a connection
		// failure, so that the command exits 4 like for an unreachable ResourceManager
		// (TestLogsExitCodes, unreachable HDFS).
		if strings.Contains(err.Error(), "no available namenodes") {
			return fmt.Errorf("%w: %w", yarnrpc.ErrConnection, err)
		}
		return err
	}
	defer h.Close()
	p := &Printer{W: o.Out, Tail: o.Filter.Tail}
	res, err := ReadAggregated(hdfsFS{h}, cands, o.Filter, p)
	if err != nil {
		return err
	}
	status := report.GetLogAggregationStatus()
	if report.LogAggregationStatus == nil {
		status = 0
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(o.Notes, "yarn-am logs: could not read %s\n", s)
	}
	pending := status == hadooppb.LogAggregationStatusProto_LOG_RUNNING || status == hadooppb.LogAggregationStatusProto_LOG_NOT_START
	if res.Dir != "" && len(res.NodeFiles) > 0 && (res.Printed > 0 || !pending) {
		if status == hadooppb.LogAggregationStatusProto_LOG_RUNNING || status == hadooppb.LogAggregationStatusProto_LOG_NOT_START {
			fmt.Fprintf(o.Notes, "yarn-am logs: the NodeManagers are still uploading the logs of %s (log aggregation status %s); run again in a few seconds for all of them\n", app, aggStatus(report))
		}
		if len(res.Denied) > 0 {
			fmt.Fprintf(o.Notes, "yarn-am logs: no permission to read %s as %s\n", strings.Join(res.Denied, ", "), sess.User)
		}
		if res.Printed == 0 {
			return noMatch(app, res, o.Filter)
		}
		return nil
	}
	if !pending {
		// The NodeManagers may still have the logs on their disks: always with aggregation off
		// (for yarn.nodemanager.log.retain-seconds), and when their upload failed.
		lv := &live{rm: rm, nm: NewNM(), o: o, app: app, p: p}
		n, kept, err := lv.afterEnd(ctx, report)
		if err != nil {
			return err
		}
		if n == 0 && kept > 0 {
			return &NotAvailableError{fmt.Sprintf("no aggregated logs of %s (log aggregation status %s), and the NodeManagers that keep the logs of %d of its containers could not serve them (their answers are above)", app, aggStatus(report), kept)}
		}
		if n > 0 {
			if status == hadooppb.LogAggregationStatusProto_LOG_DISABLED {
				fmt.Fprintf(o.Notes, "yarn-am logs: log aggregation is off on this cluster; these are the logs the NodeManagers still keep on their disks (for %s, default 3 hours, after the application ended)\n", KeyLocalRetain)
			} else {
				fmt.Fprintf(o.Notes, "yarn-am logs: %s; these are the logs the NodeManagers still keep on their disks\n", strings.TrimSuffix(explainMissing(app, owner, sess.User, report, res).Error(), "."))
			}
			return nil
		}
	}
	return explainMissing(app, owner, sess.User, report, res)
}

// afterEnd prints the logs the NodeManagers still keep of an ended application when log aggregation
// is off (TestLogsOfFinishedApplicationMatchHadoop, aggregation-off branch). No NM lists an ended
// application's containers, so the ids are tried in order on the NMs that know the application:
// container_<ts>_<app>_<attempt>_<n> for n = 1, 2, ... until 20 numbers in a row are on none of them
// (released allocations leave gaps). Ids with an RM epoch (container_e<epoch>_...) are not tried.
func (l *live) afterEnd(ctx context.Context, report *hadooppb.ApplicationReportProto) (printed, found int, err error) {
	if err := l.refreshNodes(ctx); err != nil {
		return 0, 0, err
	}
	var known []string
	for node, addr := range l.nodes {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := l.nm.AppContainers(actx, addr, l.app)
		cancel()
		if err == nil {
			known = append(known, node)
		}
	}
	sort.Strings(known)
	if len(known) == 0 {
		return 0, 0, nil
	}
	find := func(id string) (liveContainer, bool) {
		for _, node := range known {
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			files, err := l.nm.Files(actx, l.nodes[node], id)
			cancel()
			if err == nil && len(files) > 0 {
				return liveContainer{ID: id, Node: node}, true
			}
		}
		return liveContainer{}, false
	}
	var hits []liveContainer
	if id := l.o.Filter.Container; id != "" {
		if c, ok := find(id); ok {
			hits = append(hits, c)
		}
	} else {
		attempts := int(report.GetCurrentApplicationAttemptId().GetAttemptId())
		for a := 1; a <= max(attempts, 1); a++ {
			for n, misses := 1, 0; misses < 20 && n < 1<<20; n++ {
				id := fmt.Sprintf("container_%d_%04d_%02d_%06d", l.o.App.GetClusterTimestamp(), l.o.App.GetId(), a, n)
				if c, ok := find(id); ok {
					misses = 0
					if l.o.Filter.Wants(id) {
						hits = append(hits, c)
					}
				} else {
					misses++
				}
				if l.o.Filter.AM {
					break // the AM's container is number 1
				}
			}
		}
	}
	cursors := map[fileKey]*Cursor{}
	for _, c := range hits {
		if err := l.container(ctx, c, cursors); err != nil {
			fmt.Fprintf(l.o.Notes, "yarn-am logs: %v\n", err)
		}
	}
	return l.p.Printed(), len(hits), nil
}

// explainMissing says why an ended application has no aggregated logs, and what to do, from the
// aggregation status the ResourceManager reports and what the directories held.
func explainMissing(app, owner, user string, report *hadooppb.ApplicationReportProto, res AggResult) error {
	status := report.GetLogAggregationStatus()
	if report.LogAggregationStatus == nil {
		status = 0 // RMs before Hadoop 2.8 do not report it; not DISABLED, which is the default
	}
	tried := "\n  " + strings.Join(res.Tried, "\n  ")
	if len(res.Denied) > 0 {
		return &NotAvailableError{fmt.Sprintf("no permission to read the aggregated logs of %s as %s: %s; they are readable by the application's owner (%s) and the group of the remote log directory (%s); run as %s or ask an administrator",
			app, user, strings.Join(res.Denied, ", "), owner, KeyRemoteAppLogDir, owner)}
	}
	if len(res.Uploading) > 0 && status != hadooppb.LogAggregationStatusProto_LOG_NOT_START && status != hadooppb.LogAggregationStatusProto_LOG_RUNNING {
		return &NotAvailableError{fmt.Sprintf("the NodeManagers did not finish uploading the logs of %s: %s holds only %s (log aggregation status %s); see the NodeManagers' logs for why (e.g. \"Secure IO is not possible without native code extensions\" on a Kerberized cluster without Hadoop's native library)", app, res.Dir, strings.Join(res.Uploading, ", "), aggStatus(report))}
	}
	switch status {
	case hadooppb.LogAggregationStatusProto_LOG_DISABLED:
		return &NotAvailableError{fmt.Sprintf("%s has ended and log aggregation is off on this cluster (the ResourceManager reports log aggregation status DISABLED), and no NodeManager still has its logs: they keep them on their disks (yarn.nodemanager.log-dirs/%s/<container>/) only for %s (default 3 hours) after the application ended. Set %s=true in the NodeManagers' yarn-site.xml (and %s, default /tmp/logs) so that the logs of applications that end are kept in HDFS for yarn-am logs", app, app, KeyLocalRetain, KeyAggregationEnable, KeyRemoteAppLogDir)}
	case hadooppb.LogAggregationStatusProto_LOG_NOT_START, hadooppb.LogAggregationStatusProto_LOG_RUNNING:
		return &NotAvailableError{fmt.Sprintf("the logs of %s are not aggregated yet (log aggregation status %s): the NodeManagers upload them when the application ends, usually within seconds (they give up after %s, default 10 minutes); run yarn-am logs again shortly (`yarn-am status %s` shows the status). Looked in:%s", app, aggStatus(report), KeyStatusTimeout, app, tried)}
	case hadooppb.LogAggregationStatusProto_LOG_FAILED, hadooppb.LogAggregationStatusProto_LOG_TIME_OUT, hadooppb.LogAggregationStatusProto_LOG_RUNNING_WITH_FAILURE:
		return &NotAvailableError{fmt.Sprintf("log aggregation of %s did not succeed (status %s) and nothing was uploaded: see the NodeManagers' logs for the reason (HDFS space, permissions of %s). Looked in:%s", app, aggStatus(report), KeyRemoteAppLogDir, tried)}
	default:
		return &NotAvailableError{fmt.Sprintf("no aggregated logs of %s (log aggregation status %s): they were deleted (%s), or the NodeManagers write them elsewhere than this client's configuration says (%s, %s in HADOOP_CONF_DIR). Looked in:%s", app, aggStatus(report), KeyRetainSeconds, KeyRemoteAppLogDir, KeyRemoteDirSuffix, tried)}
	}
}

func noMatch(app string, res AggResult, f Filter) error {
	what := []string{}
	if len(res.Containers) == 0 {
		return &NotAvailableError{fmt.Sprintf("the aggregated files of %s in %s hold no container logs", app, res.Dir)}
	}
	if f.Container != "" {
		what = append(what, "--container "+f.Container)
	}
	if f.AM {
		what = append(what, "--am")
	}
	if f.File != "" {
		what = append(what, "--file "+f.File)
	}
	return &NotAvailableError{fmt.Sprintf("no log of %s matches %s; containers with logs in %s: %s", app, strings.Join(what, " "), res.Dir, strings.Join(res.Containers, ", "))}
}

// live prints, and follows, the logs of a running application from its NodeManagers.
type live struct {
	rm    *yarnrpc.ApplicationClient
	nm    *NM
	o     Options
	app   string
	p     *Printer
	nodes map[string]string // node id (host:port) -> NM http address
	last  string            // the file the last output came from (follow)
}

// liveContainer is a container and the node it runs on.
type liveContainer struct {
	ID, Node string
	Done     bool // the AM reports it COMPLETED
}

func (l *live) refreshNodes(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	nodes, err := l.rm.GetClusterNodes(cctx)
	if err != nil {
		return fmt.Errorf("asking the ResourceManager for the NodeManagers: %w", err)
	}
	l.nodes = map[string]string{}
	for _, n := range nodes {
		id := fmt.Sprintf("%s:%d", n.GetNodeId().GetHost(), n.GetNodeId().GetPort())
		l.nodes[id] = n.GetHttpAddress()
	}
	return nil
}

// containers finds the application's containers: the TaskExecutors from the AM's
// /api/v1/containers (running and recently finished), and whatever the NodeManagers on the AM's
// host run for the application (the AM's own container). Without the AM's API every NodeManager is
// asked.
func (l *live) containers(ctx context.Context, report *hadooppb.ApplicationReportProto) []liveContainer {
	byID := map[string]liveContainer{}
	amAnswered := false
	if base := client.AMURL(report); base != "" {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, _, err := client.FetchAMStatus(actx, base)
		cancel()
		if err == nil {
			amAnswered = true
			for _, c := range st.Containers {
				if c.Node == "" {
					continue
				}
				byID[c.ID] = liveContainer{ID: c.ID, Node: c.Node, Done: c.State == contract.Completed}
			}
		}
	}
	amHost := report.GetHost()
	for node, addr := range l.nodes {
		if amAnswered && hostOf(node) != amHost {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ids, err := l.nm.AppContainers(actx, addr, l.app)
		cancel()
		if err != nil {
			continue // the NM does not run anything of the application
		}
		for _, id := range ids {
			if _, ok := byID[id]; !ok {
				byID[id] = liveContainer{ID: id, Node: node}
			}
		}
	}
	out := make([]liveContainer, 0, len(byID))
	for _, c := range byID {
		if l.o.Filter.Wants(c.ID) {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func hostOf(node string) string {
	return hadoop.NodeHost(node)
}

type fileKey struct{ container, file string }

func (l *live) run(ctx context.Context, report *hadooppb.ApplicationReportProto) error {
	if err := l.refreshNodes(ctx); err != nil {
		return err
	}
	cursors := map[fileKey]*Cursor{}
	var everSeen bool
	var lastErr error
	for {
		cs := l.containers(ctx, report)
		ended := client.IsTerminal(report.GetYarnApplicationState())
		for _, c := range cs {
			everSeen = true
			if err := l.container(ctx, c, cursors); err != nil {
				if lastErr == nil || err.Error() != lastErr.Error() {
					fmt.Fprintf(l.o.Notes, "yarn-am logs: %v\n", err)
				}
				lastErr = err
			}
		}
		if !l.o.Follow {
			return l.finish(report, cs, lastErr)
		}
		if ended {
			fmt.Fprintf(l.o.Notes, "yarn-am logs: %s ended (%s)\n", l.app, client.StateName(report.GetYarnApplicationState()))
			return nil
		}
		if l.o.Filter.Container != "" && len(cs) == 1 && cs[0].Done {
			fmt.Fprintf(l.o.Notes, "yarn-am logs: %s ended\n", cs[0].ID)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(l.o.Poll):
		}
		r, err := appReport(ctx, l.rm, l.o.App, l.o.Timeout)
		if err != nil {
			return err
		}
		report = r
		if !everSeen || len(l.nodes) == 0 {
			_ = l.refreshNodes(ctx)
		}
	}
}

func (l *live) finish(report *hadooppb.ApplicationReportProto, cs []liveContainer, lastErr error) error {
	if l.p.Printed() > 0 {
		return nil
	}
	if len(cs) == 0 {
		if l.o.Filter.Container != "" || l.o.Filter.AM {
			return &NotAvailableError{fmt.Sprintf("%s is %s and none of its running containers matches the filter; `yarn-am status %s` lists them", l.app, client.StateName(report.GetYarnApplicationState()), l.app)}
		}
		return &NotAvailableError{fmt.Sprintf("%s is %s and has no container with logs yet (waiting for the ApplicationMaster's container?); run again when it runs, or use --follow", l.app, client.StateName(report.GetYarnApplicationState()))}
	}
	if lastErr != nil {
		return &NotAvailableError{fmt.Sprintf("no log of %s could be read (the NodeManagers' answers are above)", l.app)}
	}
	if l.o.Filter.File == "" {
		return &NotAvailableError{fmt.Sprintf("the containers of %s have no log files yet; run again shortly, or use --follow", l.app)}
	}
	return &NotAvailableError{fmt.Sprintf("no log of %s matches --file %s", l.app, l.o.Filter.File)}
}

// container prints (first time) or continues (follow) every wanted log file of c.
func (l *live) container(ctx context.Context, c liveContainer, cursors map[fileKey]*Cursor) error {
	addr, ok := l.nodes[c.Node]
	if !ok {
		return fmt.Errorf("%s runs on %s, which the ResourceManager does not list", c.ID, c.Node)
	}
	fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	files, err := l.nm.Files(fctx, addr, c.ID)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && (se.Status == 404 || se.Status == 500) {
			if _, seen := cursors[fileKey{c.ID, ""}]; !seen && !l.o.Follow {
				fmt.Fprintf(l.o.Notes, "yarn-am logs: %s on %s: the NodeManager no longer has its logs (%s)\n", c.ID, c.Node, se.Error())
			}
			cursors[fileKey{c.ID, ""}] = &Cursor{}
			return nil
		}
		return fmt.Errorf("%s on %s: %w", c.ID, c.Node, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		if !l.o.Filter.WantsFile(f.Name) {
			continue
		}
		k := fileKey{c.ID, f.Name}
		cur, seen := cursors[k]
		if !seen && l.p.Has(c.ID, f.Name) {
			// A rolled part printed from HDFS already (rolledSoFar): a part's name is never reused.
			cursors[k] = &Cursor{Off: f.Size}
			continue
		}
		if !seen {
			// The whole file, streamed: a big log is never held in memory (the per-request
			// timeout does not apply; ctx bounds it).
			rc, total, err := l.nm.Open(ctx, addr, c.ID, f.Name, 0)
			if err != nil {
				return fmt.Errorf("%s on %s, %s: %w", c.ID, c.Node, f.Name, err)
			}
			cursors[k] = &Cursor{Off: total}
			l.p.Header(c.ID, c.Node, f.Name, total)
			l.last = c.ID + "/" + f.Name
			err = l.p.Content(rc)
			rc.Close()
			if err != nil {
				return fmt.Errorf("%s on %s, %s: %w", c.ID, c.Node, f.Name, err)
			}
			continue
		}
		if f.Size == cur.Off {
			continue
		}
		data, skipped, truncated, err := l.nm.Next(fctx, cur, addr, c.ID, f.Name, 16<<20)
		if err != nil {
			return fmt.Errorf("%s on %s, %s: %w", c.ID, c.Node, f.Name, err)
		}
		if len(data) == 0 && skipped == 0 && !truncated {
			continue
		}
		if key := c.ID + "/" + f.Name; key != l.last {
			fmt.Fprintf(l.o.Out, "\n==> %s on %s: %s <==\n", client.Sanitize(c.ID), client.Sanitize(c.Node), client.Sanitize(f.Name))
			l.last = key
		}
		if truncated {
			fmt.Fprintf(l.o.Out, "[yarn-am logs: %s was truncated; from its beginning]\n", client.Sanitize(f.Name))
		}
		if skipped > 0 {
			fmt.Fprintf(l.o.Out, "[yarn-am logs: %d bytes skipped]\n", skipped)
		}
		if _, err := l.o.Out.Write(data); err != nil {
			return err
		}
	}
	return nil
}
