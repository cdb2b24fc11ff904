package driverclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// Stream follows the AM's event stream. It reconnects after a dropped connection with Last-Event-ID
// set to the last event it returned, so events are neither lost nor repeated (unless they fell out
// of the AM's log, which the AM reports as an event of type "gap").
type Stream struct {
	c   *Client
	ctx context.Context
	// GiveUpAfter: Next returns the connection error once reconnecting has failed for this long
	// (default 30s; the AM is gone when its application ended).
	GiveUpAfter time.Duration

	mu     sync.Mutex
	last   uint64
	body   io.ReadCloser
	rd     *bufio.Reader
	closed bool
}

// Events starts following the event stream after event id `after` (0: from the oldest event the AM
// still keeps). ctx ends the stream.
func (c *Client) Events(ctx context.Context, after uint64) *Stream {
	return &Stream{c: c, ctx: ctx, last: after, GiveUpAfter: 30 * time.Second}
}

// LastID is the id of the last event Next returned (or the starting point).
func (s *Stream) LastID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Close ends the stream.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.body != nil {
		return s.body.Close()
	}
	return nil
}

func (s *Stream) connect() error {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.c.url("events"), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatUint(s.LastID(), 10))
	s.c.authorize(req) // the owner's stream carries the workers' stderr tails
	resp, err := s.c.HTTP.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return apiError(http.MethodGet, req.URL.String(), resp, data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		resp.Body.Close()
		return ErrStreamClosed
	}
	s.body, s.rd = resp.Body, bufio.NewReaderSize(resp.Body, 64<<10)
	return nil
}

func (s *Stream) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.body != nil {
		s.body.Close()
	}
	s.body, s.rd = nil, nil
}

// Next returns the next event, reconnecting as needed. It returns ctx's error when ctx ends, an
// *APIError if the AM refuses the stream, or the last connection error after GiveUpAfter.
func (s *Stream) Next() (contract.Event, error) {
	var failingSince time.Time
	wait := 100 * time.Millisecond
	for {
		s.mu.Lock()
		closed, rd := s.closed, s.rd
		s.mu.Unlock()
		if closed {
			return contract.Event{}, ErrStreamClosed
		}
		if err := s.ctx.Err(); err != nil {
			return contract.Event{}, err
		}
		var err error
		if rd == nil {
			if err = s.connect(); err == nil {
				failingSince, wait = time.Time{}, 100*time.Millisecond
				continue
			}
			if _, refused := err.(*APIError); refused && err.(*APIError).StatusCode/100 == 4 {
				return contract.Event{}, err
			}
		} else {
			var e contract.Event
			var ok bool
			if e, ok, err = readEvent(rd); err == nil && ok {
				s.mu.Lock()
				s.last = e.ID
				s.mu.Unlock()
				return e, nil
			}
			s.drop()
			if err == nil {
				continue
			}
			var pe *protocolError
			if errors.As(err, &pe) {
				// The AM sent what no reconnect mends (reconnecting resets the give-up clock).
				return contract.Event{}, err
			}
		}
		if s.ctx.Err() != nil {
			return contract.Event{}, s.ctx.Err()
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		} else if time.Since(failingSince) > s.GiveUpAfter {
			return contract.Event{}, fmt.Errorf("driverclient: the event stream is gone for %s: %w", s.GiveUpAfter, err)
		}
		select {
		case <-s.ctx.Done():
			return contract.Event{}, s.ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// MaxEventBytes bounds one event of the stream (its lines together): the AM's events are a few KiB,
// and a stream that sends more is not read on (TestStreamRefusesAnOversizedEvent).
const MaxEventBytes = 1 << 20

// protocolError: the stream broke the event-stream contract (an event too large or not JSON); Next
// returns it at once instead of reconnecting.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return e.msg }

// errEventTooLarge: an event of the stream is larger than MaxEventBytes.
var errEventTooLarge = &protocolError{fmt.Sprintf("driverclient: an event of the stream is larger than %d bytes", MaxEventBytes)}

// readLine reads one line of at most max bytes (the newline included).
func readLine(rd *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		frag, err := rd.ReadSlice('\n')
		if len(b)+len(frag) > max {
			return "", errEventTooLarge
		}
		b = append(b, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return string(b), err
	}
}

// readEvent reads SSE lines up to the next event with data; comments and retry lines are skipped.
func readEvent(rd *bufio.Reader) (contract.Event, bool, error) {
	var data strings.Builder
	for {
		line, err := readLine(rd, MaxEventBytes-data.Len())
		if err != nil {
			return contract.Event{}, false, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() == 0 {
				continue
			}
			var e contract.Event
			if err := json.Unmarshal([]byte(data.String()), &e); err != nil {
				return contract.Event{}, false, &protocolError{"driverclient: an event is not JSON: " + err.Error()}
			}
			return e, true, nil
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// Until returns the first event for which match is true (skipping others), or Next's error.
func (s *Stream) Until(match func(contract.Event) bool) (contract.Event, error) {
	for {
		e, err := s.Next()
		if err != nil || match(e) {
			return e, err
		}
	}
}
