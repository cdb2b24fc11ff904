package flink

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/jobfile"
)

// restServer reads back the JobManager's server certificate and the REST API's own authority from
// the directory the AM wrote (writeRESTTLS).
func restServer(t *testing.T, dir string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	pw, err := os.ReadFile(filepath.Join(dir, restPassword))
	require.NoError(t, err)
	ks, err := os.ReadFile(filepath.Join(dir, restKeyStore))
	require.NoError(t, err)
	key, leaf, chain, err := pkcs12.DecodeChain(ks, string(pw))
	require.NoError(t, err)
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	ca, err := os.ReadFile(filepath.Join(dir, restCAPEM))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	return cert, pool
}

// tlsJobManager is a REST API as the JobManager's: mutual TLS with the certificates the AM wrote into
// dir (the REST API's own authority), /config and /jobmanager/config naming rpcPort.
func tlsJobManager(t *testing.T, dir string, rpcPort func() int) *httptest.Server {
	cert, pool := restServer(t, dir)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config":
			fmt.Fprint(w, `{"flink-version":"1.20.5"}`)
		case "/jobmanager/config":
			fmt.Fprintf(w, `[{"key":"jobmanager.rpc.address","value":"127.0.0.1"},{"key":"jobmanager.rpc.port","value":"%d"}]`, rpcPort())
		case "/jobs/overview":
			fmt.Fprint(w, `{"jobs":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// squatter answers anything as a finished Flink job, as a user who bound a port first would; conns
// counts the connections it accepted.
func squatter(t *testing.T, useTLS bool, conns *atomic.Int32) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"flink-version":"1.20.5","jobs":[{"id":"00000000000000000000000000000000","jid":"00000000000000000000000000000000","status":"FINISHED","state":"FINISHED"}]}`)
	})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	if useTLS {
		srv.StartTLS() // its own certificate, not the application's
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func portOf(t *testing.T, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return n
}

// The driver takes the JobManager's REST port from the JVM's own listening sockets, the one its log
// names (restLogLine) and that answers with the application's server certificate; it sends nothing to
// the JVM's other ports (a TLS handshake is an error in the blob server's log) nor to a squatter's
// that answers as Flink. It takes the RPC port the JobManager names only if its JVM listens on it:
// not a port another process of the host listens on (heldElsewhere), which the own-socket filter of
// listeningIn leaves out; without that filter this test fails. Without the log line, after
// logFallback, it asks every listening socket, and only the JobManager's answers. This test process
// stands in for the JVM.
func TestLearnBoundTakesTheJVMsOwnPorts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the JVM's sockets are read from Linux's /proc")
	}
	dir := filepath.Join(t.TempDir(), restTLSDir)
	closed, err := writeRESTTLS(dir, "127.0.0.1")
	require.NoError(t, err)
	var squatted atomic.Int32
	squatter(t, false, &squatted)
	squatter(t, true, &squatted)
	rpc, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer rpc.Close()
	var mu sync.Mutex
	elsewhere := heldElsewhere(t)
	said := elsewhere // a port another process listens on, not this one, at first
	jmREST := tlsJobManager(t, dir, func() int { mu.Lock(); defer mu.Unlock(); return said })
	restPort := portOf(t, jmREST.Listener.Addr().String())

	ports, err := listeningPorts(os.Getpid())
	require.NoError(t, err)
	assert.Contains(t, ports, portOf(t, rpc.Addr().String()))
	assert.Contains(t, ports, restPort)
	conn, err := net.Dial("tcp", rpc.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	again, err := listeningPorts(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, ports, again, "a connected socket is not a listening one")
	assert.NotContains(t, ports, elsewhere, "another process's listening socket is not this one's")

	logFile := filepath.Join(t.TempDir(), "jobmanager.log")
	require.NoError(t, os.WriteFile(logFile, fmt.Appendf(nil, "INFO  starting\n2026-11-27 20:05:28,123 INFO  org.apache.flink.runtime.rest.RestServerEndpoint [] - Rest endpoint listening at 127.0.0.1:%d\n", restPort), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = learnBound(ctx, os.Getpid(), "127.0.0.1", closed.client, nil, logFile)
	require.Error(t, err, "an RPC port another process listens on, not the JVM, is not taken")
	assert.Contains(t, err.Error(), fmt.Sprintf("jobmanager.rpc.port = %d, on which its JVM does not listen", elsewhere))

	mu.Lock()
	said = portOf(t, rpc.Addr().String())
	mu.Unlock()
	var times learnTimes
	b, err := learnBoundTimed(context.Background(), os.Getpid(), "127.0.0.1", closed.client, nil, logFile, &times, nil)
	require.NoError(t, err)
	assert.Equal(t, boundAddrs{RPC: rpc.Addr().String(), REST: jmREST.Listener.Addr().String()}, b)
	// Where the time went, as the driver prints it.
	assert.Positive(t, times.logNamed)
	assert.Positive(t, times.restAnswer)
	assert.Positive(t, times.rpcRead)
	assert.Contains(t, times.String(), "the log named the REST port at ")
	assert.Contains(t, times.String(), "its answer over mutual TLS took ")
	assert.Zero(t, squatted.Load(), "no other port is sent anything")

	defer func(d time.Duration) { logFallback = d }(logFallback)
	logFallback = 0
	b, err = learnBound(context.Background(), os.Getpid(), "127.0.0.1", closed.client, nil, "")
	require.NoError(t, err)
	assert.Equal(t, jmREST.Listener.Addr().String(), b.REST, "without the log, the port that answers as the JobManager, not a squatter's")

	exited := make(chan struct{})
	close(exited)
	_, err = learnBound(context.Background(), 1<<22+1, "127.0.0.1", closed.client, exited, "")
	assert.ErrorContains(t, err, "the JobManager ended before its ports were known")
}

// heldElsewhere returns a port on which another process alone listens: a socket this test binds and
// hands to a child (sleep) before it closes its own descriptors, as a squatter's or another JVM's
// port on the AM's host. The child ends with the test.
func heldElsewhere(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := portOf(t, l.Addr().String())
	f, err := l.(*net.TCPListener).File()
	require.NoError(t, err)
	cmd := exec.Command("sleep", "600")
	cmd.ExtraFiles = []*os.File{f}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.NoError(t, f.Close())
	require.NoError(t, l.Close())
	c, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
	require.NoError(t, err, "the child listens on the port")
	c.Close()
	return port
}

// The log is read from where it stopped, a line cut by a read included, up to its bound.
func TestLogTailFindsTheRESTLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jobmanager.log")
	l := &logTail{path: p}
	assert.Zero(t, l.restPort(), "no log yet")
	require.NoError(t, os.WriteFile(p, []byte("INFO a\nINFO Rest endpoint listen"), 0o644))
	assert.Zero(t, l.restPort())
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	fmt.Fprint(f, "ing at nm1.example.com:40123\nINFO later\n")
	f.Close()
	assert.Equal(t, 40123, l.restPort())
}

// Until the driver says where the JobManager's JVM bound, the AM publishes nothing: its proxy answers
// 503 (framework.NotStartedError), the details say it is starting, the TaskManagers get no address;
// once the driver wrote the file, the AM publishes the RPC address and reaches the REST port it names.
func TestStartAMPublishesNothingBeforeTheJobManagerBound(t *testing.T) {
	p := writeJob(t, "[flink]\nhome = \"flink\"\njar = \"job.jar\"\n")
	fakeFlinkHome(t, filepath.Dir(p))
	j, err := jobfile.LoadJob(p)
	require.NoError(t, err)
	wd := t.TempDir()
	t.Chdir(wd)
	a := newTestAuthority(t)
	var mu sync.Mutex
	published := map[string]string{}
	var events []contract.Event
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fw, err := flinkFramework{}.StartAM(ctx, j, framework.AMStart{Host: "127.0.0.1", TLS: a, TrackingURL: "http://am:8088/",
		Publish: func(k, v string) { mu.Lock(); published[k] = v; mu.Unlock() },
		Emit:    func(e contract.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	require.NoError(t, err)
	path := fw.DriverEnv[envBoundFile]
	assert.Equal(t, filepath.Join(wd, boundFile), path)
	assert.Equal(t, "127.0.0.1", fw.DriverEnv[envHost])
	assert.NotContains(t, fw.WorkerEnv, envJobManager, "no address at the TaskManagers' launch")
	assert.NotContains(t, fw.DriverEnv, envJobManager)

	req := httptest.NewRequest("GET", "https://127.0.0.1/config", nil)
	_, err = fw.Proxy.Transport.RoundTrip(req)
	var starting *framework.NotStartedError
	require.ErrorAs(t, err, &starting)
	assert.Contains(t, starting.What, "the JobManager has not started")
	d, err := fw.Details(ctx)
	require.NoError(t, err)
	assert.Equal(t, []contract.Detail{{Name: "State", Value: "JobManager starting (its ports are not bound yet)"}}, d)
	mu.Lock()
	assert.Empty(t, published)
	mu.Unlock()

	jmREST := tlsJobManager(t, filepath.Join(wd, restTLSDir), func() int { return 4242 })
	require.NoError(t, writeBound(path, boundAddrs{RPC: "127.0.0.1:4242", REST: jmREST.Listener.Addr().String()}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return published[publishedJobManager] == "127.0.0.1:4242"
	}, 10*time.Second, 20*time.Millisecond)
	resp, err := fw.Proxy.Transport.RoundTrip(httptest.NewRequest("GET", "https://127.0.0.1/config", nil))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the proxy reaches the bound REST port, with the AM's client certificate")
	mu.Lock()
	require.NotEmpty(t, events)
	assert.Equal(t, "the JobManager bound its ports", events[len(events)-1].Message, "the message names no port (anonymous readers get it)")
	assert.Equal(t, "RPC 127.0.0.1:4242, REST "+jmREST.Listener.Addr().String(), events[len(events)-1].Detail)
	mu.Unlock()
}

// A file that names another host than the AM's is not taken: the AM tells of it and publishes nothing.
func TestAwaitRefusesAnotherHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), boundFile)
	require.NoError(t, writeBound(path, boundAddrs{RPC: "10.0.0.9:6123", REST: "10.0.0.9:8081"}))
	jm := newJobManager("127.0.0.1")
	var got []contract.Event
	published := false
	jm.await(context.Background(), path, func(string, string) { published = true }, func(e contract.Event) { got = append(got, e) })
	assert.False(t, published)
	_, ok := jm.known()
	assert.False(t, ok)
	require.Len(t, got, 1)
	assert.Equal(t, contract.SeverityError, got[0].Severity)
	assert.Contains(t, got[0].Message, "is not on the AM's host 127.0.0.1")

	require.NoError(t, os.WriteFile(path, []byte(`{"rpc":"127.0.0.1:0","rest":"127.0.0.1:8081"}`), 0o600))
	_, err := readBound(path)
	assert.ErrorContains(t, err, `the JobManager's rpc address "127.0.0.1:0" is not host:port with a port in 1-65535`)
}

// The job's own ports win ([flink.config] or -D; rest.bind-port over rest.port); the home's
// (Flink's defaults, which anyone could squat) do not count: else 0, any free port.
func TestJobPorts(t *testing.T) {
	c := flinkdist.NewConfig()
	rpc, rest := jobPorts(c)
	assert.Equal(t, [2]string{"0", "0"}, [2]string{rpc, rest})
	c.Set("rest.port", "50100-50200")
	c.Set("jobmanager.rpc.port", "50300")
	rpc, rest = jobPorts(c)
	assert.Equal(t, [2]string{"50300", "50100-50200"}, [2]string{rpc, rest})
	c.Set("rest.bind-port", "50400")
	_, rest = jobPorts(c)
	assert.Equal(t, "50400", rest)
}

// A TaskManager's launcher waits for the AM to publish the JobManager's address, retrying the AM's
// errors, and gives up after the bound with a clear error.
func TestAwaitJobManager(t *testing.T) {
	calls := 0
	w := framework.Worker{Published: func(context.Context) (map[string]string, error) {
		calls++
		switch {
		case calls == 1:
			return nil, errors.New("503 the AM is restarting")
		case calls < 4:
			return map[string]string{}, nil
		}
		return map[string]string{publishedJobManager: "127.0.0.1:40000"}, nil
	}}
	addr, err := awaitJobManager(context.Background(), w, time.Minute, time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:40000", addr)
	assert.Equal(t, 4, calls)

	env, err := flinkFramework{}.PrepareWorker(context.Background(), w)
	require.NoError(t, err)
	assert.Equal(t, []string{envJobManager + "=127.0.0.1:40000"}, env)

	never := framework.Worker{Published: func(context.Context) (map[string]string, error) { return map[string]string{}, nil }}
	_, err = awaitJobManager(context.Background(), never, 50*time.Millisecond, time.Millisecond)
	assert.ErrorContains(t, err, "no JobManager address from the AM after")
	assert.ErrorContains(t, err, "the JobManager has not started")

	_, err = awaitJobManager(context.Background(), framework.Worker{}, time.Second, time.Millisecond)
	assert.ErrorContains(t, err, "cannot ask the AM for the JobManager's address")
}

// Until the JobManager's log names its REST port, the driver reads the log alone, not the JVM's
// sockets: here the "JVM" is a process that does not exist, whose sockets would be an error of
// /proc, and the wait ends on the log's silence instead. Once the line is there, the sockets are read
// (and the missing process is the error).
func TestLearnBoundReadsNoSocketBeforeTheLogNamesThePort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the JVM's sockets are read from Linux's /proc")
	}
	logFile := filepath.Join(t.TempDir(), "jobmanager.log")
	require.NoError(t, os.WriteFile(logFile, []byte("2026-11-29 18:00:00,000 INFO  starting\n"), 0o644))
	gone := 1<<22 + 1
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := learnBound(ctx, gone, "127.0.0.1", &tls.Config{}, nil, logFile)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the JobManager's log does not name its REST port yet")

	f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("2026-11-29 18:00:01,000 INFO  org.apache.flink.runtime.rest.RestServerEndpoint [] - Rest endpoint listening at 127.0.0.1:40001\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	_, err = learnBound(ctx2, gone, "127.0.0.1", &tls.Config{}, nil, logFile)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "does not name its REST port")
}

// The JobManager's RPC line, as Flink 1.x and 2.x log it with and without internal TLS (and as
// Flink before 1.18 did, with akka); the metrics query service's actor system, which also binds a
// port, is not it.
func TestRPCLogLine(t *testing.T) {
	for line, want := range map[string]string{
		"2026-11-29 17:56:44,842 INFO  org.apache.flink.runtime.rpc.pekko.PekkoRpcServiceUtils - Actor system started at pekko.ssl.tcp://flink@127.0.0.2:38523\n": "38523",
		"INFO  PekkoRpcServiceUtils [] - Actor system started at pekko.tcp://flink@nm1.example.com:6123\n":                                                        "6123",
		"INFO  AkkaRpcServiceUtils - Actor system started at akka.tcp://flink@10.0.0.1:50100":                                                                     "50100",
		"INFO  PekkoRpcServiceUtils - Actor system started at pekko.ssl.tcp://flink@[::1]:41000\n":                                                                "41000",
		"INFO  PekkoRpcServiceUtils - Actor system started at pekko.ssl.tcp://flink-metrics@127.0.0.2:33503\n":                                                    "",
		"INFO  PekkoRpcServiceUtils - Actor system started at pekko://flink-metrics\n":                                                                            "",
		"INFO  PekkoRpcServiceUtils - Trying to start actor system, external address 127.0.0.2:0, bind address 0.0.0.0:0.\n":                                      "",
	} {
		got := ""
		if m := rpcLogLine.FindStringSubmatch(line); m != nil {
			got = m[1]
		}
		assert.Equal(t, want, got, line)
	}
}

// Both lines, read in one go or line by line, each the first of its kind.
func TestLogTailFindsTheRPCAndRESTLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jobmanager.log")
	require.NoError(t, os.WriteFile(p, []byte("INFO Actor system started at pekko.ssl.tcp://flink@h:4100\n"+
		"INFO Actor system started at pekko.ssl.tcp://flink-metrics@h:4200\nINFO Rest endpoint listening at h:4300\n"+
		"INFO Actor system started at pekko.ssl.tcp://flink@h:4400\n"), 0o644))
	l := &logTail{path: p}
	l.scan()
	assert.Equal(t, [2]int{4100, 4300}, [2]int{l.rpc, l.rest})

	require.NoError(t, os.WriteFile(p, []byte("INFO a\nINFO Actor system started at pekko.ssl.tcp://flink@h:4100"), 0o644))
	l = &logTail{path: p}
	l.scan()
	assert.Zero(t, l.rpc, "a line not yet ended is not read")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	fmt.Fprint(f, "\n")
	f.Close()
	assert.Zero(t, l.restPort())
	assert.Equal(t, 4100, l.rpc)
}

// The RPC port goes out before the REST port is known: as soon as the JobManager's log names it and
// the JVM listens on it; not a port another process listens on, nor the metrics system's. The port
// the JobManager then names in /jobmanager/config must be the one handed out. This test process
// stands in for the JVM.
func TestLearnBoundHandsOutTheRPCPortFirst(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the JVM's sockets are read from Linux's /proc")
	}
	dir := filepath.Join(t.TempDir(), restTLSDir)
	closed, err := writeRESTTLS(dir, "127.0.0.1")
	require.NoError(t, err)
	rpc, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer rpc.Close()
	rpcPort := portOf(t, rpc.Addr().String())
	var said atomic.Int32
	said.Store(int32(rpcPort))
	jmREST := tlsJobManager(t, dir, func() int { return int(said.Load()) })
	restPort := portOf(t, jmREST.Listener.Addr().String())
	elsewhere := heldElsewhere(t)

	logFile := filepath.Join(t.TempDir(), "jobmanager.log")
	appendLog := func(line string) {
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		fmt.Fprintln(f, line)
		require.NoError(t, f.Close())
	}
	var handed []string
	early := func(a string) error { handed = append(handed, a); return nil }
	learn := func(d time.Duration, times *learnTimes) (boundAddrs, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return learnBoundTimed(ctx, os.Getpid(), "127.0.0.1", closed.client, nil, logFile, times, early)
	}

	appendLog(fmt.Sprintf("INFO PekkoRpcServiceUtils - Actor system started at pekko.ssl.tcp://flink-metrics@127.0.0.1:%d", rpcPort))
	_, err = learn(300*time.Millisecond, nil)
	require.Error(t, err)
	assert.Empty(t, handed, "the metrics system's line is not the RPC port")

	l := &logTail{path: logFile}
	l.scan()
	require.Zero(t, l.rpc)
	require.NoError(t, os.WriteFile(logFile, nil, 0o644))
	appendLog(fmt.Sprintf("INFO PekkoRpcServiceUtils - Actor system started at pekko.ssl.tcp://flink@127.0.0.1:%d", elsewhere))
	_, err = learn(300*time.Millisecond, nil)
	require.Error(t, err)
	assert.Empty(t, handed, "a port the JVM does not listen on is not handed out")

	require.NoError(t, os.WriteFile(logFile, nil, 0o644))
	appendLog(fmt.Sprintf("INFO PekkoRpcServiceUtils - Actor system started at pekko.ssl.tcp://flink@127.0.0.1:%d", rpcPort))
	_, err = learn(300*time.Millisecond, nil)
	require.Error(t, err, "the REST port is not named yet")
	assert.Contains(t, err.Error(), "does not name its REST port yet")
	assert.Equal(t, []string{rpc.Addr().String()}, handed, "the RPC port, before the REST port is known")

	handed = nil
	appendLog(fmt.Sprintf("INFO RestServerEndpoint - Rest endpoint listening at 127.0.0.1:%d", restPort))
	var times learnTimes
	b, err := learn(10*time.Second, &times)
	require.NoError(t, err)
	assert.Equal(t, boundAddrs{RPC: rpc.Addr().String(), REST: jmREST.Listener.Addr().String()}, b)
	assert.Equal(t, []string{rpc.Addr().String()}, handed, "handed out once")
	assert.Positive(t, times.rpcEarly)
	assert.Contains(t, times.String(), "the RPC port published alone at ")

	handed = nil
	said.Store(int32(restPort)) // a port the JVM listens on, but not the one its log named
	_, err = learn(10*time.Second, nil)
	assert.ErrorContains(t, err, fmt.Sprintf("jobmanager.rpc.port = %d, but its log named %d, which was published", restPort, rpcPort))
}

// The AM hands the RPC address to the TaskManagers as soon as the driver's file names it, and the
// REST port to its own clients only once the file names that too.
func TestAwaitPublishesTheRPCAddressFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), boundFile)
	jm := newJobManager("127.0.0.1")
	var mu sync.Mutex
	published := map[string]string{}
	var events []contract.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		jm.await(context.Background(), path, func(k, v string) { mu.Lock(); published[k] = v; mu.Unlock() },
			func(e contract.Event) { mu.Lock(); events = append(events, e); mu.Unlock() })
	}()
	require.NoError(t, writeBound(path, boundAddrs{RPC: "127.0.0.1:4242", PID: 7}))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return published[publishedJobManager] == "127.0.0.1:4242"
	}, 10*time.Second, 10*time.Millisecond)
	_, known := jm.known()
	assert.False(t, known, "no REST port yet")
	b, err := readBound(path)
	require.NoError(t, err)
	assert.Equal(t, 7, b.PID, "the JVM's pid is there from the first version")
	mu.Lock()
	assert.Empty(t, events)
	mu.Unlock()

	require.NoError(t, writeBound(path, boundAddrs{RPC: "127.0.0.1:4242", REST: "127.0.0.1:4243", PID: 7}))
	<-done
	got, known := jm.known()
	assert.True(t, known)
	assert.Equal(t, "127.0.0.1:4243", got.REST)
	require.Len(t, events, 1)
	assert.Equal(t, "RPC 127.0.0.1:4242, REST 127.0.0.1:4243", events[0].Detail)

	require.NoError(t, writeBound(path, boundAddrs{RPC: "10.0.0.9:4242"}))
	other := newJobManager("127.0.0.1")
	var refused []contract.Event
	other.await(context.Background(), path, func(string, string) { t.Error("published another host's RPC address") },
		func(e contract.Event) { refused = append(refused, e) })
	require.Len(t, refused, 1)
	assert.Contains(t, refused[0].Message, "RPC address 10.0.0.9:4242 is not on the AM's host 127.0.0.1")
}

// A TaskManager that reaches the JobManager's RPC port before its resource manager runs tries again
// after 1 s, not Flink's 10 s; the job's own value stays.
func TestTaskManagerRegistrationErrorDelay(t *testing.T) {
	c := flinkdist.NewConfig()
	assert.True(t, setRegistrationDelay(c))
	v, _ := c.Get("cluster.registration.error-delay")
	assert.Equal(t, "1 s", v)
	c = flinkdist.NewConfig()
	c.Set("cluster.registration.error-delay", "5 s")
	assert.False(t, setRegistrationDelay(c))
	v, _ = c.Get("cluster.registration.error-delay")
	assert.Equal(t, "5 s", v)
}
