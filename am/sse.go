package am

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/am/contract"
)

// This file serves the event log as Server-Sent Events on GET /api/v1/events. SSE is a few lines of
// text per event over one long response, so net/http does it without a library: "id:" is the event
// id, "event:" its type, "data:" its JSON on one line; a reconnecting EventSource (or any client)
// sends Last-Event-ID and continues exactly after it; ?since=ID does the same for clients that cannot
// set headers; comment lines keep proxies from closing an idle stream.
//
// The same endpoint answers with a JSON array instead when asked for ?format=json or with an Accept
// header that wants application/json and not text/event-stream (for polling clients, `status`, and
// the web UI behind the RM's proxy, which buffers streamed responses).

// DefaultSSEHeartbeat is how often an idle stream gets a comment line.
const DefaultSSEHeartbeat = 15 * time.Second

// EventsHandler serves l on GET /api/v1/events; heartbeat <= 0 uses DefaultSSEHeartbeat.
func EventsHandler(l *EventLog, heartbeat time.Duration) http.HandlerFunc {
	if heartbeat <= 0 {
		heartbeat = DefaultSSEHeartbeat
	}
	return func(w http.ResponseWriter, r *http.Request) {
		after, err := resumeFrom(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if wantsJSON(r) {
			limit := 0
			if v := r.URL.Query().Get("limit"); v != "" {
				if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
					writeError(w, http.StatusBadRequest, fmt.Sprintf("limit=%q: want a non-negative integer", v))
					return
				}
			}
			var evs []contract.Event
			if r.URL.Query().Get("since") == "" && r.Header.Get("Last-Event-ID") == "" && limit > 0 {
				evs = l.Latest(limit)
			} else {
				evs = l.Since(after, limit)
			}
			if evs == nil {
				evs = []contract.Event{}
			}
			writeJSON(w, http.StatusOK, evs)
			return
		}
		flusher, ok := w.(http.Flusher)
		if !ok {
			writeError(w, http.StatusInternalServerError, "this connection cannot stream; use ?format=json")
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, "retry: 2000\n: yarn-am events after id %d\n\n", after)
		flusher.Flush()

		sub := l.Subscribe(after)
		defer sub.Close()
		for {
			ctx, cancel := context.WithTimeout(r.Context(), heartbeat)
			evs, err := sub.Next(ctx, 500)
			cancel()
			if r.Context().Err() != nil {
				return
			}
			if err != nil { // idle: heartbeat comment
				if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
					return
				}
				flusher.Flush()
				continue
			}
			for _, e := range evs {
				if err := WriteSSE(w, e); err != nil {
					return
				}
			}
			flusher.Flush()
		}
	}
}

// WriteSSE writes one event in SSE framing.
func WriteSSE(w interface{ Write([]byte) (int, error) }, e contract.Event) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, data)
	return err
}

// resumeFrom reads where a reader continues: Last-Event-ID, else ?since=, else 0 (the oldest kept).
func resumeFrom(r *http.Request) (uint64, error) {
	for _, src := range []struct{ name, v string }{{"Last-Event-ID", r.Header.Get("Last-Event-ID")}, {"since", r.URL.Query().Get("since")}} {
		if v := strings.TrimSpace(src.v); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s=%q: want the id of the last event received (a non-negative integer)", src.name, src.v)
			}
			return n, nil
		}
	}
	return 0, nil
}

func wantsJSON(r *http.Request) bool {
	if f := r.URL.Query().Get("format"); f != "" {
		return f == "json"
	}
	acc := r.Header.Get("Accept")
	return strings.Contains(acc, "application/json") && !strings.Contains(acc, "text/event-stream")
}
