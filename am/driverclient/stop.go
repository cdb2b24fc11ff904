package driverclient

import (
	"context"
	"net/http"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// Stop asks the AM to stop the application through its framework (POST /api/v1/stop, yarn-am stop):
// a Flink job stops with a savepoint in savepoint ("" = its configured directory) and the result is
// the savepoint's path. timeout bounds the stop on the AM's side (0: contract.DefaultStopTimeout);
// the call waits that long and a little more. A framework that cannot stop gracefully answers 409
// (an *APIError) and names yarn-am kill.
func (c *Client) Stop(ctx context.Context, savepoint string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = contract.DefaultStopTimeout
	}
	req := contract.StopRequest{Savepoint: savepoint, Timeout: timeout.String()}
	call := *c
	call.CallTimeout = timeout + 10*time.Second // the AM's own bound answers first
	var res contract.StopResult
	if err := call.do(ctx, http.MethodPost, "stop", req, &res); err != nil {
		return "", err
	}
	return res.Result, nil
}
