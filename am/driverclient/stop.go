package driverclient

import (
	"context"
	"net/http"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// Stop asks the AM to stop the application through its framework (POST /api/v1/stop, yarn-am stop),
// which keeps its work's state in stateDir ("" = its configured place) and answers with what it kept
// and what it calls it. timeout bounds the stop on the AM's side (0: contract.DefaultStopTimeout);
// the call waits that long and a little more. A framework that cannot stop gracefully answers 409
// (an *APIError) and names yarn-am kill.
func (c *Client) Stop(ctx context.Context, stateDir string, timeout time.Duration) (contract.StopResult, error) {
	if timeout <= 0 {
		timeout = contract.DefaultStopTimeout
	}
	req := contract.StopRequest{StateDir: stateDir, Timeout: timeout.String()}
	call := *c
	call.CallTimeout = timeout + 10*time.Second // the AM's own bound answers first
	var res contract.StopResult
	if err := call.do(ctx, http.MethodPost, "stop", req, &res); err != nil {
		return contract.StopResult{}, err
	}
	return res, nil
}
