package web

import (
	"errors"
	"sync"
)

// slotLimiter counts exchanges of one kind that hold a connection for long (event streams, proxied
// exchanges), in total and per client address (docs/security.md#flood-bounds).
type slotLimiter struct {
	max, perClient int
	// refusal words the error of a bound reached (total: the total's, else the address's).
	refusal func(total bool, max int, client string) string

	mu   sync.Mutex
	open int
	by   map[string]int
}

// newSlotLimiter allows max slots at once, perClient of them to one address; <= 0 means no bound.
func newSlotLimiter(max, perClient int, refusal func(total bool, max int, client string) string) *slotLimiter {
	return &slotLimiter{max: max, perClient: perClient, refusal: refusal, by: map[string]int{}}
}

// acquire takes a slot for client; the error says which bound is reached. A nil limiter has no
// bound.
func (l *slotLimiter) acquire(client string) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.max > 0 && l.open >= l.max:
		return nil, errors.New(l.refusal(true, l.max, client))
	case l.perClient > 0 && l.by[client] >= l.perClient:
		return nil, errors.New(l.refusal(false, l.perClient, client))
	}
	l.open++
	l.by[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if l.by[client]--; l.by[client] <= 0 {
				delete(l.by, client)
			}
		})
	}, nil
}

// Open is how many slots are taken.
func (l *slotLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}
