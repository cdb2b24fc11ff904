package flink

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFlinksActingGETsAreWrites: Flink answers GET /jobs/<id>/yarn-cancel and /yarn-stop by
// cancelling or stopping the job, so through the AM's proxy they are the owner's only, however the
// path is spelled; every other read stays a read.
func TestFlinksActingGETsAreWrites(t *testing.T) {
	for path, acts := range map[string]bool{
		"/jobs/a1b2/yarn-cancel":  true,
		"/jobs/a1b2/yarn-stop":    true,
		"/jobs/a1b2/Yarn-Cancel/": true,
		"//jobs//a1b2//yarn-stop": true,
		"/v1/jobs/a1b2/yarn-stop": true,
		"/jobs/a1b2":              false,
		"/jobs/overview":          false,
		"/jobs/a1b2/exceptions":   false,
		"/jobs/yarn-cancelled":    false,
	} {
		assert.Equal(t, acts, actsOnGET(httptest.NewRequest("GET", "http://am"+path, nil)), path)
	}
}
