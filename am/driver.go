package am

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/yarn-am/yarn-am/container/contract"
	"github.com/yarn-am/yarn-am/container/stderrtail"
)

// DriverConfig is driver mode: a user program run in the AM container whose exit code decides the
// application's final status.
type DriverConfig struct {
	Command string   // run with bash -c
	Env     []string // added to the AM's environment (EnvAPI, EnvSecret)
	Stdout  io.Writer
	Stderr  io.Writer

	// tail keeps the last lines of the driver's stderr for the diagnostics (driverOutcome).
	tail *stderrtail.Tail
}

// startDriver starts the driver; the returned channel closes when it has exited.
func (a *AM) startDriver(ctx context.Context) (<-chan struct{}, error) {
	d := a.cfg.Driver
	cmd := exec.Command("/bin/bash", "-c", d.Command)
	cmd.Env = append(os.Environ(), d.Env...)
	cmd.Stdout, cmd.Stderr = d.Stdout, d.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	d.tail = &stderrtail.Tail{}
	cmd.Stderr = io.MultiWriter(cmd.Stderr, d.tail)
	// Stderr is now a pipe that Wait drains: a background process the driver leaves holding it must not
	// keep Wait from returning once the driver has exited.
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("driver %q could not be started: %w", d.Command, err)
	}
	a.log.WithFields(logrus.Fields{"pid": cmd.Process.Pid, "command": d.Command}).Info("am: driver started")
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	go func() {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		switch {
		case err == nil, errors.Is(err, exec.ErrWaitDelay): // exited 0; a leftover child held stderr
		case errors.As(err, &ee):
			code = ee.ExitCode()
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				code = 128 + int(st.Signal())
			}
		default:
			code = -1
		}
		a.mu.Lock()
		a.driverExit = &code
		a.mu.Unlock()
		a.log.WithField("exit_code", code).Info("am: driver exited")
		close(done)
		a.poke()
	}()
	return done, nil
}

// driverOutcome is the application's outcome once the driver has exited (nil before).
func (a *AM) driverOutcome() *Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.driverExit == nil {
		return nil
	}
	code := *a.driverExit
	if code == 0 {
		return &Outcome{Status: contract.Succeeded, Diagnostics: "the driver exited with code 0"}
	}
	diag := fmt.Sprintf("the driver %q exited with code %d", a.cfg.Driver.Command, code)
	if t := a.cfg.Driver.tail; t != nil {
		if l := t.Lines(); l != "" {
			diag += "; its last stderr lines (all in am.stderr):\n" + l
		}
	}
	if a.limitHit {
		diag += "; " + a.diagnostics
	}
	return &Outcome{Status: contract.Failed, Diagnostics: diag}
}
