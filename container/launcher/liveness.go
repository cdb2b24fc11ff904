package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Heartbeat calls h.Alive every interval until ctx ends. A message that fails is logged (once per
// run of failures) and otherwise ignored: the AM declares a TaskExecutor lost only when its
// NodeManager does not answer for it either, so a launcher that cannot reach the AM loses nothing.
func Heartbeat(ctx context.Context, h Heartbeater, containerID string, interval time.Duration, log logrus.FieldLogger) {
	failing := false
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		c, cancel := context.WithTimeout(ctx, interval)
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
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
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
