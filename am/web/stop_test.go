package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
)

// TestStopTakesTheSecretOverHTTPSOnly: POST /api/v1/stop ends the application like a kill, so it
// takes the secret on the HTTPS listener alone: without it 401, on the plain listener 403 whatever the
// header says; neither reaches the framework. A framework without a graceful stop is refused naming
// yarn-am kill; the state's directory ("savepoint") and the timeout reach the framework's hook as its
// StateRequest, whose answer (what was kept, and its name) is served.
func TestStopTakesTheSecretOverHTTPSOnly(t *testing.T) {
	var got []string
	var bound time.Duration
	stop := func(ctx context.Context, r framework.StateRequest) (framework.Kept, error) {
		got = append(got, r.Dir)
		dl, _ := ctx.Deadline()
		bound = time.Until(dl)
		if !r.Deadline.Equal(dl) {
			t.Errorf("the request's deadline %s is not its context's %s", r.Deadline, dl)
		}
		if r.Dir == "file:///full" {
			return framework.Kept{}, errors.New("the disk is full")
		}
		return framework.Kept{What: "Snapshot", Where: r.Dir + "/savepoint-0a1b2c-0123456789ab"}, nil
	}
	post := func(o Options, auth, body string) *httptest.ResponseRecorder {
		o.Secret = "s3cret"
		req := httptest.NewRequest(http.MethodPost, "/api/v1/stop", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		Handler(fakeBackend(newFakeEvents()), o).ServeHTTP(rec, req)
		return rec
	}
	secure := Options{Secure: true, Stop: stop}
	body := `{"savepoint": "file:///tmp/sp", "timeout": "90s"}`

	if rec := post(secure, "", body); rec.Code != http.StatusUnauthorized {
		t.Errorf("no secret: %d %s, want 401", rec.Code, rec.Body)
	}
	if rec := post(secure, "Bearer wrong", body); rec.Code != http.StatusUnauthorized {
		t.Errorf("a wrong secret: %d %s, want 401", rec.Code, rec.Body)
	}
	plain := Options{Stop: stop, SecureAPI: "https://am:8443/api/v1/"}
	if rec := post(plain, "Bearer s3cret", body); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "https://am:8443/api/v1/stop") {
		t.Errorf("the plain listener: %d %s, want 403 naming the HTTPS endpoint", rec.Code, rec.Body)
	}
	if len(got) != 0 {
		t.Fatalf("a refused request reached the framework: %q", got)
	}

	rec := post(secure, "Bearer s3cret", body)
	var res contract.StopResult
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &res) != nil || res != (contract.StopResult{Result: "file:///tmp/sp/savepoint-0a1b2c-0123456789ab", What: "Snapshot"}) {
		t.Errorf("a stop: %d %s", rec.Code, rec.Body)
	}
	if bound <= 80*time.Second || bound > 90*time.Second {
		t.Errorf("the framework's bound is %s, want the request's 90s", bound)
	}
	if rec := post(secure, "Bearer s3cret", `{"savepoint": "file:///full"}`); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "the disk is full") {
		t.Errorf("a failed stop: %d %s, want 409 with the framework's reason", rec.Code, rec.Body)
	}
	for _, bad := range []string{`{"timeout": "forever"}`, `{"timeout": "2h"}`, `{"savepoint": 3}`, `[`} {
		if rec := post(secure, "Bearer s3cret", bad); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", bad, rec.Code, rec.Body)
		}
	}
	if rec := post(Options{Secure: true}, "Bearer s3cret", body); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "use yarn-am kill") {
		t.Errorf("a framework without a graceful stop: %d %s, want 409 naming kill", rec.Code, rec.Body)
	}
}

// TestStatusServesTheFrameworkDetails: the framework's details are in every reader's status.
func TestStatusServesTheFrameworkDetails(t *testing.T) {
	fs := &contract.FrameworkStatus{Title: "Flink job", Details: []contract.Detail{{Name: "State", Value: "RUNNING"}}}
	rec := httptest.NewRecorder()
	Handler(fakeBackend(newFakeEvents()), Options{Framework: func() *contract.FrameworkStatus { return fs }}).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/status", nil))
	var s contract.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || s.Framework == nil || s.Framework.Details[0].Value != "RUNNING" {
		t.Errorf("status: %v %s", err, rec.Body)
	}
}
