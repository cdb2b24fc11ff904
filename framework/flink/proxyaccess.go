package flink

import (
	"regexp"
	"strings"

	"github.com/yarn-am/yarn-am/framework"
)

// This file says who may reach which path of the JobManager's web UI and REST API through the AM's
// proxy (framework.Proxy.Access; docs/security.md#what-anonymous-readers-see). The JobManager's
// container holds the application secret, the AM-RM token, the sealed keytab and its key; its REST
// API runs code (GET /jars/<id>/plan runs the jar's main()), serves every file beside its log
// (launch_container.sh exports YARN_AM_DEFINES, every -D value) and its configuration. So an
// anonymous reader of the tracking page gets the paths Flink's dashboard needs to draw the cluster
// and its jobs, in Flink 1.20 and 2.x, and nothing else: a path not listed here (a new release's
// included) needs the application secret over HTTPS. The lists were read from both versions'
// dashboards (the REST paths their scripts ask for) and routers
// (TestFlinkProxyAccess; TestFlinkStrangerCrawl walks them on the real JobManagers).

// PublicPaths are the JobManager's paths anonymous readers of the AM's page may GET and HEAD: the
// dashboard's own files, the cluster's and TaskManagers' overviews and metrics, and each job's
// overview, plan, vertices, metrics, checkpoints, exceptions and parallelism bounds (Flink 2's
// applications and rescales too). Not among them: logs and stdout, jars (their list, plan and run), the
// configuration (/jobmanager/config, a job's /config and /jobmanager/config), the environment,
// thread dumps, the profiler, flame graphs, accumulators, execution results, anything that acts.
var PublicPaths = framework.Paths{
	// The dashboard: index.html and its scripts at the root, its images, fonts and editor under assets/.
	"/", "/index.html", "/*.js", "/*.css", "/assets/{file...}",
	// The cluster.
	"/config", "/overview", "/jobmanager/metrics",
	"/taskmanagers", "/taskmanagers/metrics", "/taskmanagers/{taskmanagerid}", "/taskmanagers/{taskmanagerid}/metrics",
	// Jobs.
	"/jobs", "/jobs/overview", "/jobs/metrics",
	"/jobs/{jobid:hex32}", "/jobs/{jobid:hex32}/status", "/jobs/{jobid:hex32}/plan", "/jobs/{jobid:hex32}/exceptions", "/jobs/{jobid:hex32}/metrics",
	"/jobs/{jobid:hex32}/resource-requirements",
	"/jobs/{jobid:hex32}/checkpoints", "/jobs/{jobid:hex32}/checkpoints/config",
	"/jobs/{jobid:hex32}/checkpoints/details/{checkpointid:int}", "/jobs/{jobid:hex32}/checkpoints/details/{checkpointid:int}/subtasks/{vertexid:hex32}",
	"/jobs/{jobid:hex32}/vertices/{vertexid:hex32}", "/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/backpressure",
	"/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/metrics", "/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/subtasks/metrics",
	"/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/subtasktimes", "/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/taskmanagers",
	"/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/watermarks",
	"/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/subtasks/{subtaskindex:int}", "/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/subtasks/{subtaskindex:int}/metrics",
	"/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/subtasks/{subtaskindex:int}/attempts/{attempt:int}",
	// Flink 2.x: rescales, and applications (FLIP-549).
	"/jobs/{jobid:hex32}/rescales/config", "/jobs/{jobid:hex32}/rescales/history", "/jobs/{jobid:hex32}/rescales/overview",
	"/jobs/{jobid:hex32}/rescales/summary", "/jobs/{jobid:hex32}/rescales/details/{rescaleid}",
	"/applications/overview", "/applications/{applicationid:hex32}", "/applications/{applicationid:hex32}/exceptions",
}

// dashboardHandlers are the inline event handlers Flink's dashboard needs to run
// (framework.Proxy.InlineHandlers): the one Angular's critical-CSS inlining writes on the
// stylesheet's link (onload="this.media='all'"), without which the page stays unstyled (seen in
// Chromium on Flink 1.20's dashboard, TestFlinkSessionCluster's screenshot). The dashboard, a
// single-page UI, also sets inline styles (framework.Proxy.InlineStyles).
var dashboardHandlers = []string{"this.media='all'"}

// logPaths serve a JobManager's or TaskManager's log: Flink's own (redacted for the owner) by these
// paths, and by /logs/<name> any file of the container's log directory, which only Flink's own log
// names may reach.
var logPaths = framework.Paths{
	"/jobmanager/log", "/jobmanager/stdout",
	"/taskmanagers/{taskmanagerid}/log", "/taskmanagers/{taskmanagerid}/stdout",
}

// environmentPaths serve a JVM's options and class path, which carry whatever a job passed to
// env.java.opts (a trust store's password, say): the owner reads them in the container's logs.
var environmentPaths = framework.Paths{
	"/jobmanager/environment", "/jobs/{jobid:hex32}/jobmanager/environment", "/taskmanagers/{taskmanagerid}/environment",
}

// ownLog is a log file Flink writes in the container's log directory (docs/flink.md#logs): the
// JobManager's and TaskManagers' log, its rolled-over files, and the JVM's stdout and stderr.
var ownLog = regexp.MustCompile(`^(jobmanager|taskmanager)\.(log(\.[0-9]{1,4})?|out|err)$`)

// withheldFile is why a file of the container's log directory that is not Flink's own is not served.
const withheldFile = "a file of the container's log directory that is not Flink's own log (the launch script with the job's environment, the container's unredacted stderr) never leaves the node through the AM; read it with yarn-am logs"

// proxyAccess is the JobManager's framework.Proxy.Access.
func proxyAccess(p string) framework.Access {
	if name, ok := logFileName(p); ok {
		if ownLog.MatchString(name) {
			return framework.Access{Level: framework.OwnerLog}
		}
		return framework.Access{Level: framework.Withheld, Why: withheldFile}
	}
	switch {
	case logPaths.Match(p):
		return framework.Access{Level: framework.OwnerLog}
	case environmentPaths.Match(p):
		return framework.Access{Level: framework.Withheld, Why: "a JVM's options and class path carry what the job passed to env.java.opts; read them in the container's logs with yarn-am logs"}
	case PublicPaths.Match(p):
		return framework.Access{Level: framework.Public}
	}
	return framework.Access{Level: framework.OwnerOnly}
}

// logFileName is the file name of a path below /jobmanager/logs/ or /taskmanagers/<id>/logs/ (Flink
// serves the file of that name beside its log): anything below them, however deep or spelled, is a
// file request.
func logFileName(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/jobmanager/logs/")
	if !ok {
		tm, found := strings.CutPrefix(p, "/taskmanagers/")
		if !found {
			return "", false
		}
		_, rest, ok = strings.Cut(tm, "/logs/")
		if !ok || strings.Contains(tm[:strings.Index(tm, "/logs/")], "/") {
			return "", false
		}
	}
	return rest, true
}
