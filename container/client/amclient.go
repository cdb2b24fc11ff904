package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// AMClient is the HTTPS client of a running application's AM with the application's secret and
// the certificate of its TLS authority (LoadAppSecret), as scale, stop and savepoint use it, and the
// AM's status as it served it. id is the application id as the user wrote it.
func AMClient(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, id, secret string, ca []byte) (*driverclient.Client, *contract.Status, error) {
	r, err := Report(ctx, rm, appID, id)
	if err != nil {
		return nil, nil, err
	}
	v := ViewReport(r)
	if v.AMURL == "" {
		return nil, nil, fmt.Errorf("%s is %s: its ApplicationMaster does not run", id, v.State)
	}
	st, _, err := FetchAMStatus(ctx, v.AMURL)
	if err != nil {
		return nil, nil, err
	}
	if st.SecureAPI == "" {
		return nil, nil, fmt.Errorf("the AM of %s names no HTTPS API", id)
	}
	c, err := driverclient.New(st.SecureAPI, secret)
	if err != nil {
		return nil, nil, err
	}
	if err := c.Trust(ca); err != nil {
		return nil, nil, err
	}
	return c, st, nil
}

// AMBound is the AM's bound of a call the client waits timeout for: a little shorter, so that its
// answer (why it failed) comes first.
func AMBound(timeout time.Duration) time.Duration {
	return max(timeout-5*time.Second, time.Second)
}

// WaitEnded waits for an application's end after a stop and prints its final status to w: nil when
// it SUCCEEDED, ErrEndedOtherwise when it ended otherwise, and past ctx an error with the last
// thing the ResourceManager said (exit code 4).
func WaitEnded(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, id string, w io.Writer) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		r, err := rm.GetApplicationReport(ctx, appID)
		if err == nil {
			v := ViewReport(r)
			switch r.GetYarnApplicationState() {
			case hadooppb.YarnApplicationStateProto_FINISHED, hadooppb.YarnApplicationStateProto_FAILED, hadooppb.YarnApplicationStateProto_KILLED:
				line := fmt.Sprintf("%s: %s, final status %s", id, v.State, v.FinalStatus)
				if v.Diagnostics != "" {
					line += ": " + v.Diagnostics
				}
				fmt.Fprintln(w, Sanitize(line))
				if v.FinalStatus == string(contract.Succeeded) {
					return nil
				}
				return ErrEndedOtherwise
			}
		}
		select {
		case <-ctx.Done():
			last := "still running"
			if err != nil {
				last = err.Error()
			}
			return &ExitError{Code: contract.ExitUnreachable, Err: fmt.Errorf("%s has not ended within --timeout (last: %v); yarn-am status %s shows where it is", id, last, id)}
		case <-t.C:
		}
	}
}

// ErrEndedOtherwise: the application ended, but not SUCCEEDED (its final status is printed).
var ErrEndedOtherwise = errors.New("the application did not succeed")
