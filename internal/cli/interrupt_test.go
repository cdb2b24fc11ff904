package cli

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestOnInterruptRunsTheStopsOnce: a real SIGINT to this process closes interrupted and runs every
// stop function once (submit cancels the submission and the following; follow stops following), and
// stop may be called more than once.
func TestOnInterruptRunsTheStopsOnce(t *testing.T) {
	var a, b atomic.Int32
	ran := make(chan struct{}) // closed by the second stop, which runs after the first
	interrupted, stop := OnInterrupt(func() { a.Add(1) }, func() {
		if b.Add(1) == 1 {
			close(ran)
		}
	})
	defer stop()
	select {
	case <-interrupted:
		t.Fatal("interrupted before any signal")
	default:
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-interrupted:
	case <-time.After(20 * time.Second):
		t.Fatal("SIGINT did not close interrupted")
	}
	// The stops run right after interrupted closes, in the watching goroutine; the last one says so.
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatalf("the stop functions ran %d and %d times, want 1 each", a.Load(), b.Load())
	}
	stop()
	stop()
	if a.Load() != 1 || b.Load() != 1 {
		t.Fatalf("the stop functions ran %d and %d times, want 1 each", a.Load(), b.Load())
	}
}
