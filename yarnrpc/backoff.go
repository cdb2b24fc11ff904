package yarnrpc

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is capped exponential backoff with jitter: attempt n waits a random duration in
// [d/2, d] where d = min(Base·2ⁿ, Max). Jitter keeps many AMs from reconnecting to a restarted RM in
// lockstep.
type Backoff struct {
	// Base is the first delay; 0 means 200ms.
	Base time.Duration
	// Max caps every delay; 0 means 15s.
	Max time.Duration
}

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 200 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 15 * time.Second
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	return b
}

// Delay returns the wait before retry number attempt (0-based).
func (b Backoff) Delay(attempt int) time.Duration {
	b = b.withDefaults()
	d := b.Base
	for i := 0; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

// sleep waits d or until ctx ends, whichever is first; it returns ctx.Err() in the latter case.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
