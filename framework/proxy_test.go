package framework

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPathsMatchOnlyWhatTheyName: a framework's public paths (Proxy.Access) match the clean path as
// the AM forwards it, segment by segment: literals exactly (case included), variables one segment of
// id characters and of their class, globs one segment, "{name...}" the rest; nothing that climbs or
// needs escaping fills a variable, and an unknown class matches nothing.
func TestPathsMatchOnlyWhatTheyName(t *testing.T) {
	ps := Paths{"/", "/jobs/overview", "/jobs/{jobid:hex32}", "/jobs/{jobid:hex32}/vertices/{vertexid:hex32}/subtasks/{i:int}",
		"/taskmanagers/{tm}", "/*.js", "/assets/{file...}", "/bad/{x:nosuchclass}"}
	const job = "fec68861c03a96291ef11ae1a5f87945"
	for p, want := range map[string]bool{
		"/": true, "/jobs/overview": true, "/jobs/" + job: true, "/jobs/" + job + "/vertices/" + job + "/subtasks/12": true,
		"/taskmanagers/127.0.0.1:36725-3c7a1d": true, "/main.a877f620.js": true, "/assets/vs/base/worker/workerMain.js": true,
		"/jobs": false, "/Jobs/overview": false, "/jobs/overview/x": false, "/jobs/config": false, "/jobs/FEC68861C03A96291EF11AE1A5F87945": false,
		"/jobs/" + job + "/vertices/" + job + "/subtasks/metrics": false, "/jobs/" + job + "/vertices/" + job + "/subtasks/12345678901": false,
		"/taskmanagers/a b": false, "/taskmanagers/a%2Fb": false, "/taskmanagers/..": false, "/taskmanagers": false,
		"/jobmanager/logs/x.js": false, "/x.js/y": false, "/assets": false, "/assets/a/../b": false, "/bad/x": false,
	} {
		assert.Equal(t, want, ps.Match(p), p)
	}
	for in, want := range map[string]string{"": "/", "/": "/", "//jobs//overview/": "/jobs/overview", "/a/../../b": "/b",
		"jobs/./overview": "/jobs/overview", "/assets/../jobmanager/config": "/jobmanager/config"} {
		assert.Equal(t, want, CleanPath(in), in)
	}
}
