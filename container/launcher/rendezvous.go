package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/internal/freeport"
)

// A gang's rendezvous (taskexecutor.gang): the launcher reports a port that is free on its node, waits
// until the AM has the reports of every rank of the round, and gives the worker its rank and rank 0's
// address before the worker starts.

// Rendezvouser waits for a container's place in its gang.
type Rendezvouser interface {
	Rendezvous(ctx context.Context, containerID string) (*contract.Rendezvous, error)
}

// ErrGangRestarted: the gang restarted before this rank's worker started; the AM stops the container.
var ErrGangRestarted = framework.ErrRestarted

// rendezvousPoll is how often the launcher asks the AM whether the round is complete.
const rendezvousPoll = 300 * time.Millisecond

// Rendezvous polls GET <BaseURL><id>/rendezvous until the AM publishes the container's rank.
// Transient errors (the AM busy or restarting) are retried until ctx ends.
func (h *HTTPReporter) Rendezvous(ctx context.Context, containerID string) (*contract.Rendezvous, error) {
	if containerID == "" {
		return nil, errors.New("rendezvous: no container id (CONTAINER_ID is unset)")
	}
	url := h.BaseURL + containerID + contract.RendezvousPath
	// Rank 0's address comes only with the secret over HTTPS (docs/security.md#what-anonymous-readers-see),
	// so the launcher asks as it reports: with the secret, through the client pinned to the
	// application's authority, never over plain HTTP.
	client := h.Client
	if client == nil {
		return nil, errors.New("rendezvous: no HTTPS client trusting the AM's authority; the launcher sends the secret through no other")
	}
	if !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("rendezvous: %s is not an https:// URL; the launcher sends the application secret over HTTPS only", url)
	}
	var last error
	for {
		r, done, err := h.getRendezvous(ctx, client, h.Locator.URL(url))
		if done {
			return r, err
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("rendezvous at %s: %w (last answer: %w)", url, ctx.Err(), last)
		case <-time.After(rendezvousPoll):
		}
	}
}

// getRendezvous asks once; done says whether the answer is final.
func (h *HTTPReporter) getRendezvous(ctx context.Context, client *http.Client, url string) (*contract.Rendezvous, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, true, err
	}
	resp, body, _, err := h.Locator.Send(client, req, h.Secret, 64<<10)
	if resp == nil {
		return nil, false, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var r contract.Rendezvous
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, true, fmt.Errorf("rendezvous at %s: not a rendezvous document: %w", url, err)
		}
		if r.MasterAddr == "" || r.MasterPort <= 0 {
			return nil, true, fmt.Errorf("rendezvous at %s: the answer has no rank 0 address (masterAddr, masterPort): the AM shows it only with the secret over HTTPS", url)
		}
		return &r, true, nil
	case http.StatusGone:
		return nil, true, fmt.Errorf("%w: %s", ErrGangRestarted, body)
	case http.StatusNotFound, http.StatusConflict, http.StatusUnauthorized, http.StatusForbidden:
		return nil, true, fmt.Errorf("rendezvous at %s: %s: %s", url, resp.Status, body)
	}
	return nil, false, fmt.Errorf("%s: %s", resp.Status, body) // 202 (ranks missing) or a passing error
}

// FreePort returns a TCP port that is free on host now (the port rank 0's worker will listen on, if
// this container becomes rank 0). Like torchrun's own choice, it can be taken by someone else before
// the worker binds it; the window is the rendezvous.
func FreePort(host string) (int, error) {
	// Below the ephemeral range: an outgoing connection on the node cannot take it before the
	// framework binds it (internal/freeport).
	ports, err := freeport.Pick(host, 1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
