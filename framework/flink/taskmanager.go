package flink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// A TaskManager learns the JobManager's RPC address from the AM, which publishes it once the
// JobManager's JVM has bound its port (bound.go): the launcher asks before the worker starts, with
// the application secret over HTTPS, and sets envJobManager in the worker's environment
// (docs/flink.md#the-jobmanager-as-the-driver).

// jobManagerAddressBound is how long a TaskManager's launcher waits for the JobManager's address: a
// JobManager that has not bound its ports by then is not starting (its start on a busy node takes
// tens of seconds).
const jobManagerAddressBound = 5 * time.Minute

// jobManagerAddressPoll is how often the launcher asks the AM.
const jobManagerAddressPoll = 500 * time.Millisecond

// PrepareWorker waits until the AM has published the JobManager's RPC address and gives it to the
// TaskManager (envJobManager).
func (flinkFramework) PrepareWorker(ctx context.Context, w framework.Worker) ([]string, error) {
	addr, err := awaitJobManager(ctx, w, jobManagerAddressBound, jobManagerAddressPoll)
	if err != nil {
		return nil, err
	}
	return []string{envJobManager + "=" + addr}, nil
}

// awaitJobManager asks w.Published every poll until it names the JobManager, at most bound; errors
// (an AM restarting) are retried until then.
func awaitJobManager(ctx context.Context, w framework.Worker, bound, poll time.Duration) (string, error) {
	if w.Published == nil {
		return "", errors.New("flink-taskmanager: the launcher cannot ask the AM for the JobManager's address (no HTTPS client of the AM's: $YARN_AM_REPORT_URL and the container's token file)")
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	last := "the AM has not published it yet: the JobManager has not bound its ports"
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		values, err := w.Published(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				last = err.Error()
			}
		case values[publishedJobManager] != "":
			addr := values[publishedJobManager]
			if h, p, err := net.SplitHostPort(addr); err != nil || h == "" || p == "" {
				return "", fmt.Errorf("flink-taskmanager: the AM published %q as the JobManager's address, not host:port", addr)
			}
			if w.Log != nil {
				w.Log.WithField("jobmanager", addr).Infof("yarn-am launch: the JobManager's RPC address from the AM after %.1f s", time.Since(start).Seconds())
			}
			return addr, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("flink-taskmanager: no JobManager address from the AM after %.0f s (%s): the JobManager has not started; its log is jobmanager.log in the AM container (%w)",
				time.Since(start).Seconds(), last, ctx.Err())
		case <-t.C:
		}
	}
}

// keyRegistrationErrorDelay is Flink's pause after a registration attempt that failed with an error
// (ClusterOptions; the same key in 1.20 and 2.x), 10 s by default.
const keyRegistrationErrorDelay = "cluster.registration.error-delay"

// taskManagerErrorDelay is that pause for a [flink] job's TaskManagers unless the job sets its own.
// The AM publishes the JobManager's RPC address as soon as its JVM bound the port (bound.go), about
// a second before the JobManager's resource manager runs: a TaskManager whose JVM reaches the port
// in between fails to resolve the resource manager and, with Flink's default, waits 10 s before it
// tries again. Its retries cost one connection each.
const taskManagerErrorDelay = "1 s"

// setRegistrationDelay sets the TaskManager's registration error delay unless the job set one; it
// reports whether it did.
func setRegistrationDelay(c *flinkdist.Config) bool {
	if _, ok := c.Get(keyRegistrationErrorDelay); ok {
		return false
	}
	c.Set(keyRegistrationErrorDelay, taskManagerErrorDelay)
	return true
}
