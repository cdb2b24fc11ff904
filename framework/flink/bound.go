package flink

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/atomicfile"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/text"
)

// This file is how the JobManager's ports become known (docs/flink.md#addresses): its JVM binds them
// itself (port 0, any free one, unless the job names its own), so no one on the AM's host can take
// them between a choice and the bind. The driver learns them from its JVM (learnBound), writes them
// to a file in the AM container (boundFile) and only then does the AM publish them: to the REST
// client of its watch, demand, stop and proxy (jobManager) and to the TaskManagers' launchers
// (publishedJobManager, taskmanager.go). The RPC port comes first: the TaskManagers need nothing
// else, and the JVM binds it seconds before its REST port answers, so the driver writes the file
// with the RPC address alone as soon as the JVM listens on the port its log names (rpcLogLine),
// then again with both.

// boundFile is the file in the AM container's working directory where the driver writes the
// JobManager's bound ports (envBoundFile names its absolute path in the driver's environment).
const boundFile = ".yarn-am-flink-jobmanager-bound.json"

// maxBoundFile bounds the file's read: two addresses.
const maxBoundFile = 4 << 10

// publishedJobManager is the name under which the AM publishes the JobManager's RPC address
// host:port for the TaskManagers (framework.AMStart.Publish).
const publishedJobManager = "flink.jobmanager.rpc"

// boundAddrs is the file's content: the JobManager's RPC and REST addresses as its JVM bound them.
// REST is empty while only the RPC port is known (the file's first version).
type boundAddrs struct {
	RPC  string `json:"rpc"`
	REST string `json:"rest,omitempty"`
	// PID is the JVM's process, which the AM ends when a stalled job is restarted (progress.go);
	// 0: not known.
	PID int `json:"pid,omitempty"`
}

func (b boundAddrs) check() error {
	for _, a := range []struct{ name, v string }{{"rpc", b.RPC}, {"rest", b.REST}} {
		if a.name == "rest" && a.v == "" {
			continue // not bound yet: the RPC address alone
		}
		h, p, err := net.SplitHostPort(a.v)
		n, perr := strconv.Atoi(p)
		if err != nil || h == "" || perr != nil || n < 1 || n > 65535 {
			return fmt.Errorf("the JobManager's %s address %s is not host:port with a port in 1-65535", a.name, text.Quote(a.v))
		}
	}
	return nil
}

// writeBound writes b to path in one step (replaceFile): the AM never reads half of it.
func writeBound(path string, b boundAddrs) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return replaceFile(path, data)
}

// replaceFile writes data to path in one step, readable by the application's user alone: a
// temporary file beside it, renamed over it (atomicfile). The rename replaces whatever is at path
// without opening it, so a named pipe there cannot block the writer nor a link there send the data
// elsewhere (TestPublishOutcomeReplacesWhatIsInItsPlace).
func replaceFile(path string, data []byte) error {
	return atomicfile.Write(path, data, 0o600, atomicfile.TempPattern(filepath.Base(path)+".*"))
}

// readBound reads the file the driver wrote; os.ErrNotExist while it has not.
func readBound(path string) (boundAddrs, error) {
	data, err := boundedread.ReadFile("the JobManager's bound ports", path, "the file the driver writes", maxBoundFile)
	if err != nil {
		return boundAddrs{}, err
	}
	var b boundAddrs
	if err := json.Unmarshal(data, &b); err != nil {
		return boundAddrs{}, fmt.Errorf("%s: not the driver's JSON: %w", path, err)
	}
	if err := b.check(); err != nil {
		return boundAddrs{}, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// boundPoll is how often the driver reads the new lines of its JobManager's log, and its JVM's
// sockets once the log named the REST port (or after logFallback); and how often the AM looks for
// the driver's file. Both are cheap (an incremental read, a stat) and lie on the TaskManagers' path:
// every poll's wait is time until they learn the JobManager's address (the Flink row's waterfall,
// "ports learnt by the AM", testdata/bench/README.md#the-waterfall).
const boundPoll = 50 * time.Millisecond

// learnBound waits until the JobManager's JVM (pid) listens on its REST port and its RPC port, and
// returns them as host:port (host: the address both advertise). The REST port is one of the JVM's
// own listening sockets (listeningPorts) that answers GET /config over client, which trusts the
// application's authority alone and presents the AM's client certificate: only the JobManager holds
// that server certificate. Which socket to ask is what the JobManager's log (logFile) says its REST
// endpoint listens at (restCandidate): a TLS handshake sent to its other ports is an error in its
// log (the blob server's "Unknown operation 22"), so they are asked only when the log has not named
// the port after logFallback (a log configuration without Flink's INFO lines). The RPC port is what
// the JobManager says it bound (/jobmanager/config, jobmanager.rpc.port, which Flink sets back to the
// bound port), checked to be one of the JVM's own listening sockets. It gives up when ctx ends or
// exited is closed.
func learnBound(ctx context.Context, pid int, host string, client *tls.Config, exited <-chan struct{}, logFile string) (boundAddrs, error) {
	return learnBoundTimed(ctx, pid, host, client, exited, logFile, nil, nil)
}

// learnTimes is where learnBound's time went: when (after its start) the log named the REST port,
// how long the successful REST answer and /jobmanager/config read took, and when the RPC port alone
// was handed on (0: it was not, before both were known).
type learnTimes struct {
	logNamed, restAnswer, rpcRead, rpcEarly time.Duration
}

func (l learnTimes) String() string {
	early := ""
	if l.rpcEarly > 0 {
		early = fmt.Sprintf("; the RPC port published alone at %.2f s", l.rpcEarly.Seconds())
	}
	return fmt.Sprintf("the log named the REST port at %.2f s, its answer over mutual TLS took %.2f s, /jobmanager/config %.2f s%s",
		l.logNamed.Seconds(), l.restAnswer.Seconds(), l.rpcRead.Seconds(), early)
}

// learnBoundTimed is learnBound that also says where its time went (times; nil: not asked) and,
// before both ports are known, hands the RPC address to early (nil: not asked) once: when the
// JobManager's log names its RPC port (rpcLogLine) and its JVM listens on that port. The port the
// JobManager then names in /jobmanager/config must be the same one, else it fails: the TaskManagers
// may already have it.
func learnBoundTimed(ctx context.Context, pid int, host string, client *tls.Config, exited <-chan struct{}, logFile string, times *learnTimes, early func(rpc string) error) (boundAddrs, error) {
	if times == nil {
		times = &learnTimes{}
	}
	hc := restClient(client, 3*time.Second)
	defer hc.CloseIdleConnections()
	last := errors.New("the JVM listens on no port yet")
	rest, earlyRPC := 0, 0
	log := &logTail{path: logFile}
	start := time.Now()
	t := time.NewTicker(boundPoll)
	defer t.Stop()
	for {
		// The JVM's sockets (hundreds of descriptors to read) only once they can be asked: the log
		// named the RPC port (for early) or the REST port, or the fallback's wait is over, or the REST
		// port is known.
		var ports []int
		var err error
		log.scan()
		if times.logNamed == 0 && log.rest != 0 {
			times.logNamed = time.Since(start)
		}
		rpcNamed := early != nil && earlyRPC == 0 && log.rpc != 0
		if rest != 0 || log.rest != 0 || rpcNamed || time.Since(start) >= logFallback {
			ports, err = listeningPorts(pid)
		} else {
			err = errors.New("the JobManager's log does not name its REST port yet")
		}
		if err == nil && rpcNamed && slices.Contains(ports, log.rpc) {
			if perr := early(net.JoinHostPort(host, strconv.Itoa(log.rpc))); perr != nil {
				return boundAddrs{}, perr
			}
			earlyRPC, times.rpcEarly = log.rpc, time.Since(start)
		}
		switch {
		case err != nil:
			last = err
		case rest == 0 && (log.rest != 0 || time.Since(start) >= logFallback):
			candidates := ports
			if c := log.rest; c != 0 {
				candidates = nil
				if slices.Contains(ports, c) {
					candidates = []int{c}
				}
				last = fmt.Errorf("the JobManager's log names REST port %d, which is not one its JVM listens on (%v) or does not answer as the JobManager", c, ports)
			}
			asked := time.Now()
			if rest = findREST(ctx, hc, host, candidates); rest != 0 {
				times.restAnswer = time.Since(asked)
			}
		case rest == 0:
			last = fmt.Errorf("the JobManager's log does not name its REST port yet (its JVM listens on %v)", ports)
		}
		if rest != 0 && err == nil {
			asked := time.Now()
			rpc, rerr := rpcPortFromConfig(ctx, hc, host, rest)
			times.rpcRead = time.Since(asked)
			switch {
			case rerr != nil:
				if ctx.Err() == nil { // not the wait's own end cutting the request short
					last = rerr
				}
			case !slices.Contains(ports, rpc):
				last = fmt.Errorf("the JobManager says jobmanager.rpc.port = %d, on which its JVM does not listen (it listens on %v)", rpc, ports)
			case earlyRPC != 0 && rpc != earlyRPC:
				return boundAddrs{}, fmt.Errorf("the JobManager says jobmanager.rpc.port = %d, but its log named %d, which was published", rpc, earlyRPC)
			default:
				return boundAddrs{RPC: net.JoinHostPort(host, strconv.Itoa(rpc)), REST: net.JoinHostPort(host, strconv.Itoa(rest))}, nil
			}
		}
		select {
		case <-ctx.Done():
			return boundAddrs{}, fmt.Errorf("the JobManager's ports: %w (last: %v)", ctx.Err(), last)
		case <-exited:
			return boundAddrs{}, fmt.Errorf("the JobManager ended before its ports were known (last: %v)", last)
		case <-t.C:
		}
	}
}

// logFallback is how long the driver waits for the JobManager's log to name its REST port before it
// asks each of the JVM's listening sockets instead (a variable for the tests).
var logFallback = 2 * time.Minute

// maxLogScan bounds how much of the JobManager's log the driver reads for its REST port: the line
// comes within its first seconds, a few hundred KiB in.
const maxLogScan = 16 << 20

// restLogLine is Flink's RestServerEndpoint's INFO line once it has bound its port (1.x and 2.x).
var restLogLine = regexp.MustCompile(`Rest endpoint listening at \S+?:(\d+)\b`)

// rpcLogLine is Flink's INFO line once the JobManager's RPC actor system has bound its port (1.x and
// 2.x; pekko since 1.18, akka before; .ssl with internal TLS). The system is "flink": the metrics
// query service's, started after it, is "flink-metrics". The host may be an IPv6 address in
// brackets: the port is what follows its last colon.
var rpcLogLine = regexp.MustCompile(`Actor system started at (?:pekko|akka)(?:\.ssl)?\.tcp://flink@\S+:(\d+)(?:\s|$)`)

// logTail reads a growing log from where it stopped, line by line, at most maxLogScan bytes, for the
// RPC and REST ports it names (the first line of each; 0 until read).
type logTail struct {
	path      string
	off       int64
	partial   []byte
	rpc, rest int
}

// restPort returns the port of the first restLogLine read so far, 0 if none.
func (l *logTail) restPort() int {
	l.scan()
	return l.rest
}

// scan reads the log's new complete lines until both ports are known.
func (l *logTail) scan() {
	if (l.rest != 0 && l.rpc != 0) || l.path == "" || l.off >= maxLogScan {
		return
	}
	f, err := os.Open(l.path)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	for l.off < maxLogScan {
		n, err := f.ReadAt(buf, l.off)
		l.off += int64(n)
		data := append(l.partial, buf[:n]...)
		if cut := bytes.LastIndexByte(data, '\n'); cut >= 0 {
			for line := range bytes.Lines(data[:cut+1]) {
				if m := rpcLogLine.FindSubmatch(line); l.rpc == 0 && m != nil {
					l.rpc, _ = strconv.Atoi(string(m[1]))
				}
				if m := restLogLine.FindSubmatch(line); l.rest == 0 && m != nil {
					l.rest, _ = strconv.Atoi(string(m[1]))
				}
			}
			data = data[cut+1:]
		}
		l.partial = append([]byte(nil), data[:min(len(data), 64<<10)]...)
		if err != nil || n == 0 || (l.rest != 0 && l.rpc != 0) {
			return
		}
	}
}

// findREST asks every port at once (a port that is not HTTP, such as the RPC port, may hold the
// TLS handshake until the client's timeout) and returns the lowest that answers as the JobManager's
// REST API, 0 if none does.
func findREST(ctx context.Context, hc *http.Client, host string, ports []int) int {
	answers := make([]bool, len(ports))
	var wg sync.WaitGroup
	for i, p := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = isREST(ctx, hc, host, p)
		}()
	}
	wg.Wait()
	for i, ok := range answers {
		if ok {
			return ports[i]
		}
	}
	return 0
}

// isREST says whether host:port answers GET /config as a JobManager's REST API, over mutual TLS.
func isREST(ctx context.Context, hc *http.Client, host string, port int) bool {
	rest := &flinkdist.REST{URL: "https://" + net.JoinHostPort(host, strconv.Itoa(port)), HTTP: hc}
	_, err := rest.Version(ctx)
	return err == nil
}

// rpcPortFromConfig reads jobmanager.rpc.port from the JobManager's /jobmanager/config.
func rpcPortFromConfig(ctx context.Context, hc *http.Client, host string, restPort int) (int, error) {
	rest := &flinkdist.REST{URL: "https://" + net.JoinHostPort(host, strconv.Itoa(restPort)), HTTP: hc}
	conf, err := rest.JobManagerConfig(ctx)
	if err != nil {
		return 0, err
	}
	v, ok := conf["jobmanager.rpc.port"]
	if !ok {
		return 0, errors.New("the JobManager's /jobmanager/config has no jobmanager.rpc.port")
	}
	p, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("the JobManager's /jobmanager/config says jobmanager.rpc.port = %s, not a bound port", text.Quote(v))
	}
	return p, nil
}

// jobManager is the JobManager as the AM reaches it: unknown until the driver's file says where its
// JVM bound its ports.
type jobManager struct {
	host  string // the AM's host, which the REST API's certificate names
	ready chan struct{}
	once  sync.Once
	b     boundAddrs // set before ready is closed
}

func newJobManager(host string) *jobManager {
	return &jobManager{host: host, ready: make(chan struct{})}
}

// known returns the addresses once the driver wrote them.
func (j *jobManager) known() (boundAddrs, bool) {
	select {
	case <-j.ready:
		return j.b, true
	default:
		return boundAddrs{}, false
	}
}

func (j *jobManager) set(b boundAddrs) {
	j.once.Do(func() { j.b = b; close(j.ready) })
}

// errNotStarted is what every reader of the REST API gets before the ports are known.
var errNotStarted = &framework.NotStartedError{What: "the JobManager has not started: its ports are not bound yet"}

// dial connects to the JobManager's REST port whatever address the request named (the URL names
// the host alone, which the server certificate is checked against). wait: wait for the port until
// ctx ends (the watch, demand and stop); else fail at once with errNotStarted (the proxy: 503).
func (j *jobManager) dial(wait bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		b, ok := j.known()
		if !ok && !wait {
			return nil, errNotStarted
		}
		if !ok {
			select {
			case <-j.ready:
				b = j.b
			case <-ctx.Done():
				return nil, fmt.Errorf("%s: %w", errNotStarted.What, ctx.Err())
			}
		}
		return d.DialContext(ctx, network, b.REST)
	}
}

// transport is restTransport reaching the JobManager's bound REST port (dial).
func (j *jobManager) transport(cfg *tls.Config, wait bool) *http.Transport {
	t := restTransport(cfg)
	t.DialContext = j.dial(wait)
	return t
}

// await reads the driver's file at path until it names both ports, then hands them to the REST
// clients (set) and the AM's events. The RPC address goes to the TaskManagers (publish) as soon as
// the file names it, which the driver's first version of it does alone. A file that is there but
// wrong is an error in the AM's log and events, and the JobManager stays unknown.
func (j *jobManager) await(ctx context.Context, path string, publish func(name, value string), emit func(contract.Event)) {
	t := time.NewTicker(boundPoll)
	defer t.Stop()
	published := ""
	for {
		b, err := readBound(path)
		if err == nil {
			if h, _, _ := net.SplitHostPort(b.RPC); h != j.host {
				err = fmt.Errorf("%s: the JobManager's RPC address %s is not on the AM's host %s", path, b.RPC, j.host)
			} else if h, _, _ := net.SplitHostPort(b.REST); b.REST != "" && h != j.host {
				err = fmt.Errorf("%s: the JobManager's REST address %s is not on the AM's host %s", path, b.REST, j.host)
			}
		}
		switch {
		case err == nil:
			if b.RPC != published {
				publish(publishedJobManager, b.RPC)
				published = b.RPC
			}
			if b.REST == "" {
				break // the RPC port alone so far
			}
			j.set(b)
			// The addresses go to the secret's holders only (Detail): a reader of the page reaches
			// the JobManager through the AM, and needs no port of it.
			emit(contract.Event{Type: eventJob, Message: "the JobManager bound its ports", Detail: fmt.Sprintf("RPC %s, REST %s", b.RPC, b.REST)})
			return
		case !errors.Is(err, os.ErrNotExist):
			emit(contract.Event{Type: eventJob, Severity: contract.SeverityError, Message: err.Error()})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// jobPorts are the JobManager's RPC and REST ports to bind: the job's own (jobmanager.rpc.port;
// rest.bind-port, else rest.port; a port or a range, as Flink takes them), else 0, any free one.
// The home's configuration does not count: its ports (Flink's defaults, 6123 and 8081) are what
// anyone on the host would squat.
func jobPorts(job *flinkdist.Config) (rpc, rest string) {
	rpc, rest = "0", "0"
	if v, ok := job.Get("jobmanager.rpc.port"); ok && strings.TrimSpace(v) != "" {
		rpc = strings.TrimSpace(v)
	}
	for _, k := range []string{"rest.port", "rest.bind-port"} { // the latter wins, as in Flink
		if v, ok := job.Get(k); ok && strings.TrimSpace(v) != "" {
			rest = strings.TrimSpace(v)
		}
	}
	return rpc, rest
}

// learnBoundBound is how long the driver looks for its JVM's ports: a JobManager whose REST API does
// not answer by then is stuck (the JVM's own end ends the wait first).
const learnBoundBound = 10 * time.Minute

// publishBound learns the ports the JobManager's JVM (pid, logging to logFile) bound, hands them to the driver's own
// REST client (jm) and writes them to path for the AM (jobManager.await): first the RPC address
// alone, as soon as the JVM listens on it, for the TaskManagers; then both. It says on stdout what it
// learnt, or why it could not.
func publishBound(ctx context.Context, jm *jobManager, pid int, client *tls.Config, exited <-chan struct{}, logFile, path string, stdout io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, learnBoundBound)
	defer cancel()
	start := time.Now()
	var times learnTimes
	early := func(rpc string) error {
		if err := writeBound(path, boundAddrs{RPC: rpc, PID: pid}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "yarn-am flink-jobmanager: the JobManager's JVM bound RPC %s (its log names it, its JVM listens on it); published to the AM for the TaskManagers after %.1f s\n",
			rpc, time.Since(start).Seconds())
		return nil
	}
	b, err := learnBoundTimed(ctx, pid, jm.host, client, exited, logFile, &times, early)
	b.PID = pid
	if err == nil {
		err = writeBound(path, b)
	}
	if err != nil {
		fmt.Fprintf(stdout, "yarn-am flink-jobmanager: the JobManager's ports are not published: %v\n", err)
		return
	}
	jm.set(b)
	fmt.Fprintf(stdout, "yarn-am flink-jobmanager: the JobManager's JVM bound RPC %s and REST %s (learnt in %.1f s: %s); published to the AM\n",
		b.RPC, b.REST, time.Since(start).Seconds(), times)
}
