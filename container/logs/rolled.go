package logs

import (
	"context"
	"fmt"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// rolledMark marks the headers of the parts rolledSoFar prints.
const rolledMark = "rolled, aggregated"

// rolledSoFar prints, for a running application, the log files its NodeManagers have uploaded to
// HDFS while it runs (YARN's rolling log aggregation, docs/job-file.md#log-aggregation): the rolled
// parts a NodeManager may already have deleted from its disk. Each header says "rolled, aggregated";
// the current files the live part prints after them are the NodeManagers'. Nothing aggregated yet,
// or HDFS out of reach, is said in a note and the live part goes on: the current files are still
// there to print.
func rolledSoFar(ctx context.Context, sess *client.Session, report *hadooppb.ApplicationReportProto, o Options, p *Printer) {
	if sess == nil || sess.Conf == nil {
		return
	}
	app := yarnrpc.FormatApplicationID(o.App)
	owner := report.GetUser()
	if owner == "" {
		owner = sess.User
	}
	h, err := sess.DialStaging(sess.User)
	if err != nil {
		fmt.Fprintf(o.Notes, "yarn-am logs: the rolled logs of %s aggregated so far could not be read (%v); printing the NodeManagers' current files\n", app, err)
		return
	}
	defer h.Close()
	p.Mark = rolledMark
	res, err := ReadAggregated(hdfsFS{h}, AppDirs(sess.Conf, owner, app, o.App.GetId()), o.Filter, p)
	p.Mark = ""
	if err != nil {
		fmt.Fprintf(o.Notes, "yarn-am logs: the rolled logs of %s aggregated so far could not be read (%v); printing the NodeManagers' current files\n", app, err)
		return
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(o.Notes, "yarn-am logs: could not read %s\n", s)
	}
	if n := res.Printed; n > 0 {
		fmt.Fprintf(o.Notes, "yarn-am logs: %s is running: %d log file(s) marked \"%s\" are parts its NodeManagers uploaded to %s while it runs (rolling log aggregation); the others are the NodeManagers' current files\n", app, n, rolledMark, res.Dir)
	}
}
