package am

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/container/stderrtail"
)

func TestDriverOutcomeCarriesTheDriversLastStderrLines(t *testing.T) {
	d := &DriverConfig{Command: "./driver.sh", tail: &stderrtail.Tail{}}
	_, _ = d.tail.Write([]byte("bash: line 1: ./driver.sh: No such file or directory\n"))
	a := &AM{cfg: Config{Driver: d}}
	code := 127
	a.driverExit = &code
	out := a.driverOutcome()
	require.NotNil(t, out)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, `the driver "./driver.sh" exited with code 127`)
	assert.Contains(t, out.Diagnostics, "./driver.sh: No such file or directory")

	code = 0
	assert.Equal(t, "the driver exited with code 0", a.driverOutcome().Diagnostics, "a driver that succeeded adds nothing")
}

// A driver that exits while a background child still holds its stderr: the exit is seen at once (not
// when the child ends), with its code and its stderr.
func TestDriverExitSeenWhileAChildHoldsStderr(t *testing.T) {
	var stderr strings.Builder
	d := &DriverConfig{Command: "sleep 30 & echo 'driver-marker failed' >&2; exit 4", Stdout: io.Discard, Stderr: &lockedWriter{w: &stderr}}
	a := &AM{cfg: Config{Driver: d}, wake: make(chan struct{}, 1), log: logrus.NewEntry(logrus.New())}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the background sleep's process group
	done, err := a.startDriver(ctx)
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the driver's exit was not seen within 20 s: Wait waited for the child holding stderr")
	}
	out := a.driverOutcome()
	require.NotNil(t, out)
	assert.Contains(t, out.Diagnostics, "exited with code 4")
	assert.Contains(t, out.Diagnostics, "driver-marker failed")
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
