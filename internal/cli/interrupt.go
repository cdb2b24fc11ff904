package cli

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// OnInterrupt watches for SIGINT and SIGTERM until stop is called: the first one closes interrupted
// and calls each of stops (cancelling what is under way). One watch for a command's whole run
// (resetting and registering again would leave SIGINT ignored in a process started in the background).
func OnInterrupt(stops ...func()) (interrupted <-chan struct{}, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	in, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(in)
			for _, s := range stops {
				s()
			}
		case <-done:
		}
	}()
	var once sync.Once
	return in, func() { once.Do(func() { signal.Stop(sigs); close(done) }) }
}
