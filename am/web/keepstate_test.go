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

// TestSavepointTakesTheSecretOverHTTPSOnly: POST /api/v1/savepoint writes the application's state
// where the caller says, so it takes the secret on the HTTPS listener alone, as a stop does: without
// it 401, on the plain listener 403 whatever the header says; neither reaches the framework. A
// framework without one is refused saying so; the directory and the timeout reach the framework's
// hook, whose answer is served.
func TestSavepointTakesTheSecretOverHTTPSOnly(t *testing.T) {
	var got []string
	var bound time.Duration
	keep := func(ctx context.Context, r framework.StateRequest) (framework.Kept, error) {
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
		req := httptest.NewRequest(http.MethodPost, "/api/v1/savepoint", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		Handler(fakeBackend(newFakeEvents()), o).ServeHTTP(rec, req)
		return rec
	}
	secure := Options{Secure: true, KeepState: keep}
	body := `{"dir": "file:///tmp/sp", "timeout": "90s"}`

	if rec := post(secure, "", body); rec.Code != http.StatusUnauthorized {
		t.Errorf("no secret: %d %s, want 401", rec.Code, rec.Body)
	}
	if rec := post(secure, "Bearer wrong", body); rec.Code != http.StatusUnauthorized {
		t.Errorf("a wrong secret: %d %s, want 401", rec.Code, rec.Body)
	}
	plain := Options{KeepState: keep, SecureAPI: "https://am:8443/api/v1/"}
	if rec := post(plain, "Bearer s3cret", body); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "https://am:8443/api/v1/savepoint") {
		t.Errorf("the plain listener: %d %s, want 403 naming the HTTPS endpoint", rec.Code, rec.Body)
	}
	if len(got) != 0 {
		t.Fatalf("a refused request reached the framework: %q", got)
	}

	rec := post(secure, "Bearer s3cret", body)
	var res contract.KeepStateResult
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &res) != nil || res != (contract.KeepStateResult{Path: "file:///tmp/sp/savepoint-0a1b2c-0123456789ab", What: "Snapshot"}) {
		t.Errorf("a savepoint: %d %s", rec.Code, rec.Body)
	}
	if bound <= 80*time.Second || bound > 90*time.Second {
		t.Errorf("the framework's bound is %s, want the request's 90s", bound)
	}
	if rec := post(secure, "Bearer s3cret", `{}`); rec.Code != http.StatusOK || got[len(got)-1] != "" {
		t.Errorf("no dir: %d %s, want the framework's configured one (\"\")", rec.Code, rec.Body)
	}
	if rec := post(secure, "Bearer s3cret", `{"dir": "file:///full"}`); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "the disk is full") {
		t.Errorf("a failed savepoint: %d %s, want 409 with the framework's reason", rec.Code, rec.Body)
	}
	for _, bad := range []string{`{"timeout": "forever"}`, `{"timeout": "2h"}`, `{"dir": 3}`, `[`, `{"dir": "` + strings.Repeat("x", 4097) + `"}`} {
		if rec := post(secure, "Bearer s3cret", bad); rec.Code != http.StatusBadRequest {
			t.Errorf("%.40s: %d %.200s, want 400", bad, rec.Code, rec.Body)
		}
	}
	if rec := post(Options{Secure: true}, "Bearer s3cret", body); rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "keeps no state of its work on demand") {
		t.Errorf("a framework without savepoints: %d %s, want 409 saying so", rec.Code, rec.Body)
	}
}
