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
	"sync"
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

// envTokenFile is Hadoop's variable naming a process's token file.
const envTokenFile = "HADOOP_TOKEN_FILE_LOCATION"

// driverTokensFile is the driver's token file in the AM's working directory.
const driverTokensFile = "yarn-am-driver-tokens"

// driverDelegationTokensFile is the file of contract.EnvDelegationTokens in the AM's working
// directory: the delegation tokens alone, rewritten after every refresh (tokens_refresh.go).
const driverDelegationTokensFile = "yarn-am-delegation-tokens"

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
	// FreshTokens, when set (the AM refreshes its tokens: a keytab), returns the current delegation
	// tokens, which replace those of Tokens in the token file of a driver started again in place: its
	// first one's may have ended by then.
	FreshTokens func() map[string]yarnrpc.Token
	Stdout      io.Writer
	Stderr      io.Writer
	// EndOnFailureLimit: when the failure limit is reached, the AM stops the driver (SIGTERM to its
	// process group) and the application fails with the limit's diagnostics, whatever the driver's
	// exit code. A Flink JobManager is such a driver: it would wait for TaskManagers that are no
	// longer replaced (docs/flink.md#scaling-failures-logs).
	EndOnFailureLimit bool
	// Restart, when set, is asked when the driver exits with a code other than 0 while the AM runs
	// and has not stopped it (framework.AM.RestartDriver): ok starts it again in place, in the same
	// attempt, with env ("KEY=value") added to its environment; else its exit ends the application.
	Restart func(ctx context.Context, code int) (env []string, ok bool)
}

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

// driverProc is driver mode's process (driverConfig): the user program in the AM's container, started
// by Run, started again in place when its framework asks (driverConfig.Restart), stopped at the failure
// limit (driverConfig.EndOnFailureLimit), its stderr's last lines kept, and its exit turned into the
// application's outcome. It owns its state under a mutex of its own, a leaf: the AM may call it with
// the AM's mutex held, and it takes no other lock (doc.go, "Locking").
type driverProc struct {
	// Set by newDriverProc, never changed afterwards.
	cfg  *driverConfig
	log  logrus.FieldLogger
	wake func()           // wakes the AM's loop once the driver has ended for good
	tail *stderrtail.Tail // the last lines of its stderr, redacted (safe for concurrent use)

	mu          sync.Mutex
	pid         int    // the driver's process (group), once started
	exit        *int   // its exit code, once it has exited for good
	ended       bool   // stopped by the AM at the failure limit (driverConfig.EndOnFailureLimit)
	outcomeFile string // where the driver may write its outcome (contract.EnvOutcomeFile), once started
}

// newDriverProc returns driver mode's process for d, not started; wake is called once the driver has
// ended for good.
func newDriverProc(d *driverConfig, log logrus.FieldLogger, wake func()) *driverProc {
	return &driverProc{cfg: d, log: log, wake: wake, tail: &stderrtail.Tail{Redact: driverRedactor(d.Env, d.Tokens)}}
}

// start starts the driver; the returned channel closes when it has exited for good: with
// d.Restart, a driver that exits non-zero may be started again in place first (supervise).
func (p *driverProc) start(ctx context.Context) (<-chan struct{}, error) {
	cmd, err := p.spawn(nil)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			p.signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				p.signal(syscall.SIGKILL)
			}
		case <-done:
		}
	}()
	go p.supervise(ctx, cmd, done)
	return done, nil
}

// spawn starts the driver's process, with extra ("KEY=value") added to its environment, in a
// process group of its own.
func (p *driverProc) spawn(extra []string) (*exec.Cmd, error) {
	d := p.cfg
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
	p.mu.Lock()
	p.outcomeFile = outcome
	p.mu.Unlock()
	cmd.Env = append(cmd.Env, contract.EnvOutcomeFile+"="+outcome)
	cmd.Stderr = io.MultiWriter(cmd.Stderr, p.tail)
	// Stderr is now a pipe that Wait drains: a background process the driver leaves holding it must not
	// keep Wait from returning once the driver has exited.
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("driver %q could not be started: %w", d.Command, err)
	}
	p.log.WithFields(logrus.Fields{"pid": cmd.Process.Pid, "command": d.Command}).Info("am: driver started")
	p.mu.Lock()
	p.pid = cmd.Process.Pid
	p.mu.Unlock()
	return cmd, nil
}

// signal sends sig to the driver's process group, the one running now.
func (p *driverProc) signal(sig syscall.Signal) {
	p.mu.Lock()
	pid := p.pid
	p.mu.Unlock()
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}

// supervise waits for the driver; one that exits non-zero is started again in place when restart
// says so, else its exit code is the driver's outcome and done closes.
func (p *driverProc) supervise(ctx context.Context, cmd *exec.Cmd, done chan<- struct{}) {
	for {
		code := exitCodeOf(cmd.Wait())
		p.log.WithField("exit_code", code).Info("am: driver exited")
		next := p.restart(ctx, code)
		if next == nil {
			p.mu.Lock()
			p.exit = &code
			p.mu.Unlock()
			close(done)
			p.wake()
			return
		}
		cmd = next
		if ctx.Err() != nil { // the AM stopped while it started: it goes too
			p.signal(syscall.SIGTERM)
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

// restart starts the driver again in place when it exited non-zero while the AM runs, the AM did not
// stop it, and its framework asks for the restart (driverConfig.Restart); nil: it stays ended.
func (p *driverProc) restart(ctx context.Context, code int) *exec.Cmd {
	d := p.cfg
	p.mu.Lock()
	stopped := p.ended
	p.mu.Unlock()
	if d.Restart == nil || code == 0 || stopped || ctx.Err() != nil {
		return nil
	}
	env, ok := d.Restart(ctx, code)
	if !ok || ctx.Err() != nil {
		return nil
	}
	// What the driver left in its process group goes with it before it starts again.
	p.signal(syscall.SIGKILL)
	cmd, err := p.spawn(env)
	if err != nil {
		p.log.WithError(err).Error("am: the driver could not be started again")
		return nil
	}
	p.log.WithFields(logrus.Fields{"exit_code": code, "pid": cmd.Process.Pid}).Warn("am: driver restarted in place")
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

// outcome is the application's outcome once the driver has exited (nil before, and without a
// driver): limitHit and diagnostics are the AM's, the failure limit reached and its diagnostics.
func (p *driverProc) outcome(limitHit bool, diagnostics string) *decision.Outcome {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exit == nil {
		return nil
	}
	d, code := p.cfg, *p.exit
	if p.ended {
		return &decision.Outcome{Status: contract.Failed, Diagnostics: diagnostics + fmt.Sprintf("; the driver %q was stopped (it exited with code %d)", d.Command, code)}
	}
	said := driverSaid(d, p.outcomeFile)
	if code == 0 {
		return &decision.Outcome{Status: contract.Succeeded, Diagnostics: "the driver exited with code 0" + said}
	}
	diag := fmt.Sprintf("the driver %q exited with code %d", d.Command, code) + said
	if driverTail(p.tail, p.exit) != "" {
		diag += "; " + driverStderrPointer
	}
	if limitHit {
		diag += "; " + diagnostics
	}
	return &decision.Outcome{Status: contract.Failed, Diagnostics: diag}
}

// endOnLimit stops a driver with EndOnFailureLimit once the failure limit is reached (limitHit); its
// exit then ends the application (outcome). Without a driver it does nothing.
func (p *driverProc) endOnLimit(limitHit bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cfg.EndOnFailureLimit || !limitHit || p.ended || p.exit != nil || p.pid <= 0 {
		return
	}
	p.ended = true
	p.log.WithField("pid", p.pid).Warn("am: failure limit reached: stopping the driver")
	_ = syscall.Kill(-p.pid, syscall.SIGTERM)
}

// exited says whether the driver has exited for good (false without a driver).
func (p *driverProc) exited() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit != nil
}

// stderrTail is the driver's redacted stderr tail once it exited non-zero, else "" (and without a
// driver): the status's and the finished event's, for the secret's holders only (am/web visibility).
func (p *driverProc) stderrTail() string {
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return driverTail(p.tail, p.exit)
}

// driverSaid is the outcome the driver wrote for the diagnostics (contract.EnvOutcomeFile, at file) as
// ": text", or "": read bounded, redacted of the application's secrets, made printable and one line.
// Only a regular file is read, and its open never blocks nor follows a link
// (boundedread.OpenOwnRegular): the driver may have put a named pipe there, and the AM's loop waits on
// this read (TestDriverOutcomeFileIsReadOnlyAsARegularFile). What is there instead is named, not read.
func driverSaid(d *driverConfig, file string) string {
	if file == "" {
		return ""
	}
	f, err := boundedread.OpenOwnRegular(file)
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
