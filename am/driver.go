package am

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
	"github.com/yarn-am/yarn-am/internal/text"
)

// envTokenFile is Hadoop's variable naming a process's token file.
const envTokenFile = "HADOOP_TOKEN_FILE_LOCATION"

// driverTokensFile is the driver's token file in the AM's working directory.
const driverTokensFile = "yarn-am-driver-tokens"

// driverDelegationTokensFile is the file of contract.EnvDelegationTokens in the AM's working
// directory: the delegation tokens alone, rewritten after every refresh (tokens_refresh.go).
const driverDelegationTokensFile = "yarn-am-delegation-tokens"

// driverEnv is the driver's environment: the AM's, without its HADOOP_TOKEN_FILE_LOCATION (the AM's
// token file holds the AM-RM token, with which the driver could act as the AM towards the RM), plus
// d.Env and, with d.Tokens, HADOOP_TOKEN_FILE_LOCATION naming the driver's own token file
// (docs/security.md#the-ams-https-api, TestDriverGetsNoAMRMTokenNorTheAuthoritysKey).
func driverEnv(d *driverConfig) ([]string, error) {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, envTokenFile+"=") {
			continue
		}
		env = append(env, kv)
	}
	if d.Tokens != nil {
		path, err := filepath.Abs(driverTokensFile)
		if err != nil {
			return nil, err
		}
		creds := driverCredentials(d.Tokens)
		if d.FreshTokens != nil {
			maps.Copy(creds.Tokens, d.FreshTokens())
		}
		if err := creds.WriteFile(path); err != nil {
			return nil, fmt.Errorf("writing the driver's token file: %w", err)
		}
		env = append(env, envTokenFile+"="+path)
	}
	return append(env, d.Env...), nil
}

// startDriver starts the driver; the returned channel closes when it has exited for good: with
// d.Restart, a driver that exits non-zero may be started again in place first (superviseDriver).
func (a *am) startDriver(ctx context.Context) (<-chan struct{}, error) {
	d := a.cfg.Driver
	d.tail = &stderrtail.Tail{Redact: driverRedactor(d.Env, d.Tokens)}
	cmd, err := a.spawnDriver(nil)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			a.signalDriver(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				a.signalDriver(syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	go a.superviseDriver(ctx, cmd, done)
	return done, nil
}

// spawnDriver starts the driver's process, with extra ("KEY=value") added to its environment, in a
// process group of its own.
func (a *am) spawnDriver(extra []string) (*exec.Cmd, error) {
	d := a.cfg.Driver
	cmd := exec.Command("/bin/bash", "-c", d.Command)
	env, err := driverEnv(d)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(env, extra...) // the last of a duplicate key wins (os/exec)
	cmd.Stdout, cmd.Stderr = d.Stdout, d.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	outcome, err := filepath.Abs(contract.OutcomeFileName)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(outcome) // an earlier attempt's, or the driver's before its restart
	d.outcomeFile = outcome
	cmd.Env = append(cmd.Env, contract.EnvOutcomeFile+"="+outcome)
	cmd.Stderr = io.MultiWriter(cmd.Stderr, d.tail)
	// Stderr is now a pipe that Wait drains: a background process the driver leaves holding it must not
	// keep Wait from returning once the driver has exited.
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("driver %q could not be started: %w", d.Command, err)
	}
	a.log.WithFields(logrus.Fields{"pid": cmd.Process.Pid, "command": d.Command}).Info("am: driver started")
	a.mu.Lock()
	a.driverPID = cmd.Process.Pid
	a.mu.Unlock()
	return cmd, nil
}

// signalDriver sends sig to the driver's process group, the one running now.
func (a *am) signalDriver(sig syscall.Signal) {
	a.mu.Lock()
	pid := a.driverPID
	a.mu.Unlock()
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// superviseDriver waits for the driver; one that exits non-zero is started again in place when
// mayRestart says so, else its exit code is the driver's outcome and done closes.
func (a *am) superviseDriver(ctx context.Context, cmd *exec.Cmd, done chan<- struct{}) {
	for {
		code := exitCodeOf(cmd.Wait())
		a.log.WithField("exit_code", code).Info("am: driver exited")
		next := a.restartDriver(ctx, code)
		if next == nil {
			a.mu.Lock()
			a.driverExit = &code
			a.mu.Unlock()
			close(done)
			a.poke()
			return
		}
		cmd = next
		if ctx.Err() != nil { // the AM stopped while it started: it goes too
			a.signalDriver(syscall.SIGTERM)
		}
	}
}

// exitCodeOf is the driver's exit code from Wait's error: 128+N for a signal N, -1 when unknown.
func exitCodeOf(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay): // exited 0; a leftover child held stderr
		return 0
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return ee.ExitCode()
	default:
		return -1
	}
}

// restartDriver starts the driver again in place when it exited non-zero while the AM runs, the AM
// did not stop it, and its framework asks for the restart (driverConfig.Restart); nil: it stays
// ended.
func (a *am) restartDriver(ctx context.Context, code int) *exec.Cmd {
	d := a.cfg.Driver
	a.mu.Lock()
	stopped := a.driverEnded
	a.mu.Unlock()
	if d.Restart == nil || code == 0 || stopped || ctx.Err() != nil {
		return nil
	}
	env, ok := d.Restart(ctx, code)
	if !ok || ctx.Err() != nil {
		return nil
	}
	// What the driver left in its process group goes with it before it starts again.
	a.signalDriver(syscall.SIGKILL)
	cmd, err := a.spawnDriver(env)
	if err != nil {
		a.log.WithError(err).Error("am: the driver could not be started again")
		return nil
	}
	a.log.WithFields(logrus.Fields{"exit_code": code, "pid": cmd.Process.Pid}).Warn("am: driver restarted in place")
	return cmd
}

// restartWith is driverConfig.Restart asking a framework's RestartDriver; nil without one.
func restartWith(r func(context.Context, int) (map[string]string, bool)) func(context.Context, int) ([]string, bool) {
	if r == nil {
		return nil
	}
	return func(ctx context.Context, code int) ([]string, bool) {
		env, ok := r(ctx, code)
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(env)) {
			kv = append(kv, k+"="+env[k])
		}
		return kv, ok
	}
}

// driverOutcome is the application's outcome once the driver has exited (nil before).
func (a *am) driverOutcome() *decision.Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.driverExit == nil {
		return nil
	}
	code := *a.driverExit
	if a.driverEnded {
		return &decision.Outcome{Status: contract.Failed, Diagnostics: a.diagnostics + fmt.Sprintf("; the driver %q was stopped (it exited with code %d)", a.cfg.Driver.Command, code)}
	}
	said := driverSaid(a.cfg.Driver)
	if code == 0 {
		return &decision.Outcome{Status: contract.Succeeded, Diagnostics: "the driver exited with code 0" + said}
	}
	diag := fmt.Sprintf("the driver %q exited with code %d", a.cfg.Driver.Command, code) + said
	if driverTail(a.cfg.Driver.tail, a.driverExit) != "" {
		diag += "; " + driverStderrPointer
	}
	if a.limitHit {
		diag += "; " + a.diagnostics
	}
	return &decision.Outcome{Status: contract.Failed, Diagnostics: diag}
}

// endDriverOnLimit stops a driver with EndOnFailureLimit once the failure limit is reached; its exit
// then ends the application (driverOutcome).
func (a *am) endDriverOnLimit() {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.cfg.Driver
	if d == nil || !d.EndOnFailureLimit || !a.limitHit || a.driverEnded || a.driverExit != nil || a.driverPID <= 0 {
		return
	}
	a.driverEnded = true
	a.log.WithField("pid", a.driverPID).Warn("am: failure limit reached: stopping the driver")
	_ = syscall.Kill(-a.driverPID, syscall.SIGTERM)
}

// driverSaid is the outcome the driver wrote for the diagnostics (contract.EnvOutcomeFile) as ": text",
// or "": read bounded, redacted of the application's secrets, made printable and one line. Only a
// regular file is read, and its open never blocks nor follows a link (boundedread.OpenOwnRegular): the
// driver may have put a named pipe there, and the AM holds its lock here
// (TestDriverOutcomeFileIsReadOnlyAsARegularFile). What is there instead is named, not read.
func driverSaid(d *driverConfig) string {
	if d == nil || d.outcomeFile == "" {
		return ""
	}
	f, err := boundedread.OpenOwnRegular(d.outcomeFile)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return "; its outcome file was not read: " + text.Sanitize(text.Cut(err.Error(), 512))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, contract.MaxOutcomeBytes))
	if err != nil {
		return "; its outcome file was not read: " + text.Sanitize(text.Cut(err.Error(), 512))
	}
	said := driverRedactor(d.Env, d.Tokens).Redact(string(b))
	said = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return ' '
		}
		return r
	}, said)), " ")
	if said == "" {
		return ""
	}
	return ": " + said
}
