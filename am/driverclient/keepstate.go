package driverclient

import (
	"context"
	"net/http"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// KeepState asks the AM to keep its work's state without stopping it (POST /api/v1/savepoint,
// yarn-am savepoint) in dir ("" = the framework's configured place), and returns where the framework
// kept it and what it calls it. timeout bounds it on the AM's side (0: contract.DefaultStopTimeout);
// the call waits that long and a little more. A framework that keeps none on demand answers 409 (an
// *APIError).
func (c *Client) KeepState(ctx context.Context, dir string, timeout time.Duration) (contract.KeepStateResult, error) {
	if timeout <= 0 {
		timeout = contract.DefaultStopTimeout
	}
	req := contract.KeepStateRequest{Dir: dir, Timeout: timeout.String()}
	call := *c
	call.CallTimeout = timeout + 10*time.Second // the AM's own bound answers first
	var res contract.KeepStateResult
	if err := call.do(ctx, http.MethodPost, "savepoint", req, &res); err != nil {
		return contract.KeepStateResult{}, err
	}
	return res, nil
}
