package driverclient

import (
	"context"
	"net/http"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// Savepoint asks the AM to keep its work's state without stopping it (POST /api/v1/savepoint,
// yarn-am savepoint): a Flink job's savepoint in dir ("" = its configured directory), whose path it
// returns. timeout bounds it on the AM's side (0: contract.DefaultStopTimeout); the call waits that
// long and a little more. A framework that has none answers 409 (an *APIError).
func (c *Client) Savepoint(ctx context.Context, dir string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = contract.DefaultStopTimeout
	}
	req := contract.SavepointRequest{Dir: dir, Timeout: timeout.String()}
	call := *c
	call.CallTimeout = timeout + 10*time.Second // the AM's own bound answers first
	var res contract.SavepointResult
	if err := call.do(ctx, http.MethodPost, "savepoint", req, &res); err != nil {
		return "", err
	}
	return res.Path, nil
}
