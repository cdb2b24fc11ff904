package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// The launcher's report to the AM over HTTPS (the AM's POST /api/v1/containers/<id>/report), trusting
// only the application's TLS authority.
const (
	reportAttempts = 4
	reportTimeout  = 5 * time.Second
)

// HTTPReporter posts the launcher's report to the AM with the application's secret. It retries
// briefly (the AM may be busy); a report that still fails is returned as an error, which the launcher
// logs and otherwise ignores.
type HTTPReporter struct {
	// BaseURL is the AM's containers URL, ending in '/'; the container id and "/report" are appended.
	BaseURL string
	// Secret is sent as "Authorization: Bearer <secret>".
	Secret string
	// Client must trust only the AM's TLS authority (ReporterFromEnv builds it); nil refuses to send.
	Client *http.Client
	// Attempts defaults to 4; Backoff (the first pause, doubled after each try) to 200 ms.
	Attempts int
	Backoff  time.Duration
	// Locator moves BaseURL's host:port to a restarted AM's (amlocate.go); nil keeps BaseURL.
	Locator *AMLocator
	// Samples are the GPU samples the liveness messages carry (gpusample.go); nil: empty messages.
	Samples *SampleQueue
}

// ReporterFromEnv returns the HTTP reporter configured by the container's environment
// (YARN_AM_REPORT_URL, and the secret from the token file at HADOOP_TOKEN_FILE_LOCATION), or
// NopReporter when YARN_AM_REPORT_URL is unset (outside an AM-launched container). url overrides the
// variable when not empty.
func ReporterFromEnv(url string) (Reporter, error) {
	if url == "" {
		url = os.Getenv(contract.EnvReportURL)
	}
	if url == "" {
		return NopReporter{}, nil
	}
	path := os.Getenv("HADOOP_TOKEN_FILE_LOCATION")
	if path == "" {
		return nil, fmt.Errorf("%s=%s is set but HADOOP_TOKEN_FILE_LOCATION is not: the report needs the application secret from the container's token file", contract.EnvReportURL, url)
	}
	creds, err := yarnrpc.ReadCredentialsFile(path)
	if err != nil {
		return nil, err
	}
	secret, ok := creds.Secrets[contract.SecretAlias]
	if !ok || len(secret) == 0 {
		return nil, fmt.Errorf("the token file %s has no secret %q; the AM puts it into every TaskExecutor's credentials", path, contract.SecretAlias)
	}
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	client, err := pinnedClient(creds, path, url, contract.EnvReportURL, reportTimeout)
	if err != nil {
		return nil, err
	}
	return &HTTPReporter{BaseURL: url, Secret: string(secret), Client: client}, nil
}

// pinnedClient is the HTTP client that may carry the application secret to url: https:// only, and
// trusting only the application's TLS authority from the token file (docs/design.md#security).
func pinnedClient(creds *yarnrpc.Credentials, tokenFile, url, envName string, timeout time.Duration) (*http.Client, error) {
	if err := amtls.RequireHTTPS(url, envName); err != nil {
		return nil, err
	}
	ca := creds.Secrets[contract.TLSCACertAlias]
	if len(ca) == 0 {
		return nil, fmt.Errorf("the token file %s has no %q: the launcher trusts the AM's HTTPS API only with the application's TLS authority, which the AM puts into every TaskExecutor's credentials", tokenFile, contract.TLSCACertAlias)
	}
	return amtls.HTTPClient(ca, timeout)
}

// Report posts r to <BaseURL><container id>/report.
func (h *HTTPReporter) Report(ctx context.Context, r Report) error {
	if r.ContainerID == "" {
		return errors.New("report: no container id (CONTAINER_ID is unset), so the AM cannot tell whose report it is")
	}
	rep := contract.ContainerReport{Infos: r.Infos, FailedResource: r.FailedResource, Failure: r.Failure, Port: r.Port, Topology: r.Topology}
	if r.Exited {
		rep = workerExitReport(r)
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	url := h.BaseURL + r.ContainerID + contract.ReportPath
	if err := amtls.RequireHTTPS(h.Locator.URL(url), contract.EnvReportURL); err != nil {
		return err
	}
	client := h.Client
	if client == nil {
		return errors.New("report: no HTTP client pinned to the AM's TLS authority; refusing to send the application secret")
	}
	attempts, pause := h.Attempts, h.Backoff
	if attempts <= 0 {
		attempts = reportAttempts
	}
	if pause <= 0 {
		pause = 200 * time.Millisecond
	}
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("report to %s: %w (last error: %w)", url, ctx.Err(), last)
			case <-time.After(pause):
			}
			pause *= 2
		}
		var retry bool
		retry, last = h.post(ctx, client, h.Locator.URL(url), body)
		if last == nil || !retry {
			return last
		}
	}
	return fmt.Errorf("report to %s failed after %d attempts: %w", url, attempts, last)
}

// post sends once; retry says whether trying again could help.
func (h *HTTPReporter) post(ctx context.Context, client *http.Client, url string, body []byte) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("report: %q is not a valid URL (%s): %w", url, contract.EnvReportURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, msg, _, err := h.Locator.Send(client, req, h.Secret, 4096)
	if resp == nil {
		return true, err
	}
	switch {
	case resp.StatusCode/100 == 2:
		return false, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return true, fmt.Errorf("the AM answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	default:
		return false, fmt.Errorf("the AM refused the report (%s): %s", resp.Status, strings.TrimSpace(string(msg)))
	}
}
