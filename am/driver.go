package am

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// driverConfig is driver mode: a user program run in the AM container whose exit code decides the
// application's final status.
type driverConfig struct {
	Command string   // run with bash -c
	Env     []string // added to the AM's environment (EnvAPI, EnvSecret)
	// Tokens are the driver's credentials, written to driverTokensFile (0600) and named by the
	// driver's HADOOP_TOKEN_FILE_LOCATION: what a TaskExecutor gets (taskExecutorCredentials: the
	// delegation tokens, the application secret, the authority's certificate) and the driver's own
	// secrets (driverCredentials), never the AM-RM token nor the authority's key. nil: the driver
	// gets no token file.
	Tokens *yarnrpc.Credentials
	Stdout io.Writer
	Stderr io.Writer
	// EndOnFailureLimit: when the failure limit is reached, the AM stops the driver (SIGTERM to its
	// process group) and the application fails with the limit's diagnostics, whatever the driver's
	// exit code. A Flink JobManager is such a driver: it would wait for TaskManagers that are no
	// longer replaced (docs/flink.md#scaling-failures-logs).
	EndOnFailureLimit bool

	// tail keeps the last lines of the driver's stderr for the status's owner view (driverOutcome).
	tail *stderrtail.Tail
	// outcomeFile is where the driver may write its outcome for the diagnostics (contract.EnvOutcomeFile).
	outcomeFile string
}

// envTokenFile is Hadoop's variable naming a process's token file.
const envTokenFile = "HADOOP_TOKEN_FILE_LOCATION"

// driverTokensFile is the driver's token file in the AM's working directory.
const driverTokensFile = "yarn-am-driver-tokens"

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
		if err := driverCredentials(d.Tokens).WriteFile(path); err != nil {
			return nil, fmt.Errorf("writing the driver's token file: %w", err)
		}
		env = append(env, envTokenFile+"="+path)
	}
	return append(env, d.Env...), nil
}

// startDriver starts the driver; the returned channel closes when it has exited.
func (a *am) startDriver(ctx context.Context) (<-chan struct{}, error) {
	d := a.cfg.Driver
	cmd := exec.Command("/bin/bash", "-c", d.Command)
	env, err := driverEnv(d)
	if err != nil {
		return nil, err
	}
	cmd.Env = env
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
	_ = os.Remove(outcome) // an earlier attempt's
	d.outcomeFile = outcome
	cmd.Env = append(cmd.Env, contract.EnvOutcomeFile+"="+outcome)
	d.tail = &stderrtail.Tail{Redact: driverRedactor(d.Env, d.Tokens)}
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
