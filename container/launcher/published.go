package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// Publisheder reads what the job's framework published in the AM (framework.Worker.Published).
type Publisheder interface {
	Published(ctx context.Context) (map[string]string, error)
}

// Published asks the AM once for what the job's framework published so far
// (contract.FrameworkPublishedPath), with the secret over HTTPS, as the rendezvous: the values name
// ports the framework's processes bound.
func (h *HTTPReporter) Published(ctx context.Context) (map[string]string, error) {
	base, ok := strings.CutSuffix(h.BaseURL, "/api/v1/containers/")
	if !ok {
		return nil, fmt.Errorf("published values: the AM's URL %s does not end in /api/v1/containers/", h.BaseURL)
	}
	url := h.Locator.URL(base + contract.FrameworkPublishedPath)
	if h.Client == nil {
		return nil, errors.New("published values: no HTTPS client trusting the AM's authority; the launcher sends the secret through no other")
	}
	if !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("published values: %s is not an https:// URL; the launcher sends the application secret over HTTPS only", url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, body, _, err := h.Locator.Send(h.Client, req, h.Secret, contract.MaxPublishedBytes)
	if resp == nil {
		return nil, fmt.Errorf("published values at %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("published values at %s: %s: %s", url, resp.Status, body)
	}
	var values map[string]string
	if err := json.Unmarshal(body, &values); err != nil {
		return nil, fmt.Errorf("published values at %s: not a JSON object of strings: %w", url, err)
	}
	return values, nil
}
