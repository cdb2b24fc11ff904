package flinkdist

import (
	"context"
	"errors"
)

// Version reads GET /config, the dashboard's configuration every JobManager's REST API answers, and
// returns its flink-version: an answer without one is not a JobManager's.
func (c *REST) Version(ctx context.Context) (string, error) {
	var v struct {
		Version string `json:"flink-version"`
	}
	if err := c.get(ctx, "/config", &v); err != nil {
		return "", err
	}
	if v.Version == "" {
		return "", errors.New("flink: GET /config has no flink-version: not a JobManager's REST API")
	}
	return v.Version, nil
}

// JobManagerConfig reads GET /jobmanager/config: the JobManager's configuration as it runs, with
// what it set back once started (the RPC address and port it bound).
func (c *REST) JobManagerConfig(ctx context.Context) (map[string]string, error) {
	var entries []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	if err := c.get(ctx, "/jobmanager/config", &entries); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.Key] = e.Value
	}
	return out, nil
}
