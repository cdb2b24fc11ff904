package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/contract/amtls"
)

// Heartbeater says the launcher is alive to the AM (docs/running.md#liveness). *HTTPReporter is one.
type Heartbeater interface {
	Alive(ctx context.Context, containerID string) error
}

// Heartbeat calls h.Alive every interval (each wait drawn within contract.LivenessJitter of it,
// counted from the previous message's start) until ctx ends. A message that fails is logged (once per
// run of failures) and retried at the next wait, which is all a retry needs: the AM waits
// taskexecutor.liveness-timeout, at least three intervals, before it asks the NodeManager; and it
// declares a TaskExecutor lost only when its NodeManager does not answer for it either, so a
// launcher that cannot reach the AM loses nothing.
func Heartbeat(ctx context.Context, h Heartbeater, containerID string, interval time.Duration, log logrus.FieldLogger) {
	failing := false
	t := time.NewTimer(interval) // reset after each message
	defer t.Stop()
	for {
		sent := time.Now()
		// Two intervals: a slow answer is still a message the AM heard, and a look-up of a moved AM
		// (amlocate.go) runs within it; the next message then goes at once.
		c, cancel := context.WithTimeout(ctx, 2*interval)
		err := h.Alive(c, containerID)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			failing = true
			log.WithError(err).Warn("yarn-am launch: the liveness message to the AM failed; retrying every " + interval.String())
		case err == nil && failing:
			failing = false
			log.Info("yarn-am launch: the liveness messages reach the AM again")
		}
		t.Reset(aliveWait(interval, time.Since(sent), rand.Float64()))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// aliveWait is how long to wait before the next liveness message, elapsed after the last one
// began: interval shifted by up to contract.LivenessJitter of it either way (r in [0, 1) picks
// where), so launchers started together drift apart instead of posting in step.
func aliveWait(interval, elapsed time.Duration, r float64) time.Duration {
	jittered := time.Duration(float64(interval) * (1 + contract.LivenessJitter*(2*r-1)))
	return max(jittered-elapsed, 0)
}

// Alive posts one liveness message to <BaseURL><container id>/alive, once: the next one comes an
// interval later anyway. Its body is empty, or the GPU samples taken since the last message that
// reached the AM (contract.AliveReport; gpusample.go), which a failed message keeps for the next.
func (h *HTTPReporter) Alive(ctx context.Context, containerID string) error {
	if containerID == "" {
		return errors.New("alive: no container id (CONTAINER_ID is unset)")
	}
	url := h.Locator.URL(h.BaseURL + containerID + contract.AlivePath)
	if err := amtls.RequireHTTPS(url, contract.EnvReportURL); err != nil {
		return err
	}
	if h.Client == nil {
		return errors.New("alive: no HTTP client pinned to the AM's TLS authority; refusing to send the application secret")
	}
	pending, mark := h.Samples.Pending(time.Now())
	var body io.Reader = http.NoBody
	if pending != nil {
		b, err := json.Marshal(pending)
		if err != nil {
			return fmt.Errorf("alive: encoding the GPU samples: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return fmt.Errorf("alive: %q is not a valid URL (%s): %w", url, contract.EnvReportURL, err)
	}
	if pending != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, msg, moved, err := h.Locator.Send(h.Client, req, h.Secret, 4096)
	if moved {
		return h.Alive(ctx, containerID) // the AM moved: say it to the new attempt now
	}
	if resp == nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the AM answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	h.Samples.Sent(mark)
	return nil
}
