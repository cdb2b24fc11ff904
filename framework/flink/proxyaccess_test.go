package flink

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/framework"
)

// fillPattern is a pattern of PublicPaths with its variables and globs filled as a dashboard fills
// them.
func fillPattern(p string) string {
	return regexp.MustCompile(`\{[a-z]+\.\.\.\}|\{[a-z]+(:[a-z0-9]+)?\}|\*`).ReplaceAllStringFunc(p, func(v string) string {
		switch {
		case v == "{file...}":
			return "vs/base/worker/workerMain.js"
		case v == "*":
			return "main.a877f62051d76ab2"
		case strings.HasSuffix(v, ":hex32}"):
			return "fec68861c03a96291ef11ae1a5f87945"
		case strings.HasSuffix(v, ":int}"):
			return "3"
		}
		return "127.0.0.1:36725-3c7a1d"
	})
}

// TestFlinkProxyAccess: through the AM, anonymous readers get what Flink's dashboard draws (1.20 and
// 2.x) and nothing else; the owner gets every other path, Flink's own logs redacted, but never a
// file of the log directory that is not Flink's log, nor a JVM's environment
// (docs/security.md#what-anonymous-readers-see). Before, every GET was open but yarn-cancel and
// yarn-stop: GET /jars/<id>/plan ran the jar's main() for a stranger, /jobmanager/logs/
// launch_container.sh gave out every -D value.
func TestFlinkProxyAccess(t *testing.T) {
	level := func(p string) framework.AccessLevel { return proxyAccess(framework.CleanPath(p)).Level }
	for _, pat := range PublicPaths {
		assert.Equal(t, framework.Public, level(fillPattern(pat)), "%s as %s", pat, fillPattern(pat))
	}
	const job, vertex, tm = "/jobs/fec68861c03a96291ef11ae1a5f87945", "/vertices/0a448493b4782967b150582570326227", "/taskmanagers/127.0.0.1:36725-3c7a1d"
	for want, paths := range map[framework.AccessLevel][]string{
		framework.Public: {"/", "/index.html", "/runtime.3c0b1dd326a8331b.js", "/styles.25112ea718f4efbe.css",
			"/assets/favicon/favicon.ico", "/assets/images/flink.svg", "/jobs/overview/", "//jobs//overview",
			job + "/exceptions", job + vertex + "/subtasks/0/attempts/1", "/applications/overview", tm},
		framework.OwnerOnly: {"/jars", "/jars/3f9c_job.jar/plan", "/jars/3f9c_job.jar/run", "/jars/upload",
			"/jobmanager/config", "/jobmanager/logs", "/jobmanager/thread-dump", "/jobmanager/profiler",
			"/jobmanager/profiler/x.html", job + "/config", job + "/jobmanager/config", job + "/jobmanager/log-url",
			job + "/yarn-cancel", job + "/yarn-stop", "/jobs/fec68861c03a96291ef11ae1a5f87945/Yarn-Cancel/",
			job + "/savepoints", job + "/stop", job + "/accumulators", job + "/execution-result", job + "/rescaling",
			job + vertex + "/flamegraph", job + vertex + "/accumulators", job + vertex + "/subtasks/accumulators",
			tm + "/thread-dump", tm + "/logs", tm + "/profiler", "/cluster", "/datasets", "/applications/a1/cancel",
			job + "/a-path-of-a-later-release", "/JOBS/overview", "/jobs/overview/x", "/assets/../jobmanager/config",
			"/jobs/fec68861c03a96291ef11ae1a5f87945%2Fconfig", "/index.html/x", "/x.js/y"},
		framework.OwnerLog: {"/jobmanager/log", "/jobmanager/stdout", "/jobmanager/logs/jobmanager.log",
			"/jobmanager/logs/jobmanager.log.3", "/jobmanager/logs/jobmanager.err", "/jobmanager/logs/jobmanager.out",
			tm + "/log", tm + "/stdout", tm + "/logs/taskmanager.log", tm + "/logs/taskmanager.log.12"},
		framework.Withheld: {"/jobmanager/logs/launch_container.sh", "/jobmanager/logs/stderr", "/jobmanager/logs/am.stderr",
			"/jobmanager/logs/directory.info", "/jobmanager/logs/prelaunch.err", "/jobmanager/logs/jobmanager.log.sh",
			"/jobmanager/logs/..launch_container.sh", "//jobmanager//logs//launch_container.sh/",
			"/jobmanager/logs/jobmanager.log/../launch_container.sh", "/jobmanager/logs/a/b", "/jobmanager/logs/Jobmanager.log",
			tm + "/logs/stdout", tm + "/logs/launch_container.sh", "/jobmanager/environment", job + "/jobmanager/environment"},
	} {
		for _, p := range paths {
			assert.Equal(t, want, level(p), p)
		}
	}
	assert.NotEmpty(t, proxyAccess("/jobmanager/logs/launch_container.sh").Why, "a withheld path says why")
}
