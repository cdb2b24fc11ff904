package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/hadoop"
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

// defaultSSEHeartbeat is how often an idle stream gets a comment line.
const defaultSSEHeartbeat = 15 * time.Second

// Bounds on event streams (docs/design.md#faults): every open stream costs the AM a goroutine and
// its connection's buffers (~30 KiB), and anyone who can reach the tracking URL may open one, so the
// AM caps them in total and per client address and answers 503 with Retry-After beyond; a stream
// whose reader does not take a write within sseWriteTimeout is closed.
const (
	DefaultMaxEventStreams          = 256
	DefaultMaxEventStreamsPerClient = 16
	// sseBatch is the most events one write takes.
	sseBatch = 200
)

// sseWriteTimeout bounds every write and flush of a stream (a variable for tests).
var sseWriteTimeout = 10 * time.Second

// sseLifetime bounds how long one stream is served (a variable for tests). The write deadline ends a
// stream whose reader stopped reading only once the socket buffers are full, which a heartbeat every
// 15 s never does: without a lifetime, idle streams that are never read held their slots for good (16
// addresses x 16 streams hold all 256). At the lifetime the AM ends the stream after a comment saying
// so; EventSource, the driver client and `submit` reconnect with Last-Event-ID and lose nothing
// (TestSSEStreamEndsAtItsLifetimeAndResumes).
var sseLifetime = 10 * time.Minute

// newStreamLimiter allows max event streams at once, perClient of them from one address; <= 0 means
// no bound.
func newStreamLimiter(max, perClient int) *slotLimiter {
	return newSlotLimiter(max, perClient, func(total bool, max int, client string) string {
		if total {
			return fmt.Sprintf("the AM serves at most %d event streams at once (yarn-am am --max-event-streams); retry later or poll with ?format=json", max)
		}
		return fmt.Sprintf("the AM serves at most %d event streams at once to one address, %s (yarn-am am --max-event-streams-per-client); retry later or poll with ?format=json", max, client)
	})
}

func clientAddr(r *http.Request) string {
	return hadoop.NodeHost(r.RemoteAddr)
}

// EventsHandler serves l on GET /api/v1/events without a bound on streams (tests, embedding);
// heartbeat <= 0 uses defaultSSEHeartbeat.
func EventsHandler(l EventLog, heartbeat time.Duration) http.HandlerFunc {
	return limitedEventsHandler(l, heartbeat, nil, nil)
}

// limitedEventsHandler serves l on GET /api/v1/events with at most what lim allows streaming at once
// (nil: no bound); JSON answers are not streams and are not counted. A reader for whom full says
// false gets the events as anonymous readers see them (visibility.go); full nil: everything.
func limitedEventsHandler(l EventLog, heartbeat time.Duration, lim *slotLimiter, full func(*http.Request) bool) http.HandlerFunc {
	if heartbeat <= 0 {
		heartbeat = defaultSSEHeartbeat
	}
	return func(w http.ResponseWriter, r *http.Request) {
		view := func(e contract.Event) contract.Event { return e }
		if full != nil && !full(r) {
			view = anonymousEvent
		}
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
			out := make([]contract.Event, len(evs))
			for i, e := range evs {
				out[i] = view(e)
			}
			writeJSON(w, http.StatusOK, out)
			return
		}
		release, err := lim.acquire(clientAddr(r))
		if err != nil {
			w.Header().Set("Retry-After", "10")
			// Close the connection too: a flood's refused clients would otherwise each keep an idle
			// keep-alive connection (a goroutine and its buffers) until IdleTimeout.
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		defer release()
		rc := http.NewResponseController(w)
		// flush sends what was written, giving up (and ending the stream) when the reader does not
		// take it within sseWriteTimeout.
		flush := func() error {
			if err := rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return err
			}
			return rc.Flush()
		}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, "retry: 2000\n: yarn-am events after id %d\n\n", after)
		if err := flush(); err != nil {
			if errors.Is(err, http.ErrNotSupported) {
				_, _ = fmt.Fprint(w, ": this connection cannot stream; use ?format=json\n\n")
			}
			return
		}

		sub := l.Subscribe(after)
		defer sub.Close()
		life, endLife := context.WithTimeout(r.Context(), sseLifetime)
		defer endLife()
		for {
			ctx, cancel := context.WithTimeout(life, heartbeat)
			evs, err := sub.Next(ctx, sseBatch)
			cancel()
			if r.Context().Err() != nil {
				return
			}
			if life.Err() != nil {
				_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
				_, _ = fmt.Fprintf(w, ": this stream reached its lifetime of %s; reconnect with Last-Event-ID\n\n", sseLifetime)
				_ = flush()
				return
			}
			_ = rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
			if err != nil { // idle: heartbeat comment
				if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
					return
				}
			} else {
				for _, e := range evs {
					if err := WriteSSE(w, view(e)); err != nil {
						return
					}
				}
			}
			if err := flush(); err != nil {
				return
			}
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
