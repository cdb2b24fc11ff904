package flinkdist

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// noMainLog is how Flink 1.20's application entry point logs a main class that is not in the jar
// (shortened from a real jobmanager.log).
const noMainLog = `2026-11-27 14:07:13,298 INFO  org.apache.flink.runtime.security.contexts.HadoopSecurityContextFactory - Cannot install HadoopSecurityContext.
2026-11-27 14:07:13,309 ERROR org.apache.flink.runtime.entrypoint.ClusterEntrypoint - Could not create application program.
org.apache.flink.util.FlinkException: Could not load the provided entrypoint class.
	at org.apache.flink.client.program.DefaultPackagedProgramRetriever.getPackagedProgram(DefaultPackagedProgramRetriever.java:231) ~[flink-dist-1.20.5.jar:1.20.5]
Caused by: org.apache.flink.client.program.ProgramInvocationException: The program's entry point class 'no.such.Main' was not found in the jar file.
	at org.apache.flink.client.program.PackagedProgram.loadMainClass(PackagedProgram.java:482) ~[flink-dist-1.20.5.jar:1.20.5]
	... 4 more
Caused by: java.lang.ClassNotFoundException: no.such.Main
	at java.base/java.net.URLClassLoader.findClass(URLClassLoader.java:445) ~[?:?]
	... 4 more
`

// schemeLog: a checkpoint directory of a scheme Flink cannot load; a WARN with a trace comes after
// the ERROR, and the ERROR's trace is the one to show.
const schemeLog = `2026-11-27 14:07:19,700 ERROR org.apache.flink.runtime.dispatcher.StandaloneDispatcher - Failed to start job.
org.apache.flink.runtime.client.JobInitializationException: Could not start the JobMaster.
	at org.apache.flink.runtime.jobmaster.DefaultJobMasterServiceProcess.lambda$new$0(DefaultJobMasterServiceProcess.java:97) ~[flink-dist-1.20.5.jar:1.20.5]
Caused by: java.util.concurrent.CompletionException: org.apache.flink.util.FlinkRuntimeException: Failed to create checkpoint storage at checkpoint coordinator side.
Caused by: org.apache.flink.util.FlinkRuntimeException: Failed to create checkpoint storage at checkpoint coordinator side.
Caused by: org.apache.flink.core.fs.UnsupportedFileSystemSchemeException: Could not find a file system implementation for scheme 'foo'.
	at org.apache.flink.core.fs.FileSystem.getUnguardedFileSystem(FileSystem.java:551) ~[flink-dist-1.20.5.jar:1.20.5]
Caused by: org.apache.flink.core.fs.UnsupportedFileSystemSchemeException: Hadoop is not in the classpath/dependencies.
	... 27 more
2026-11-27 14:07:19,876 WARN  org.apache.pekko.actor.CoordinatedShutdown - Could not addJvmShutdownHook
java.lang.IllegalStateException: Shutdown in progress
	at java.base/java.lang.ApplicationShutdownHooks.add(ApplicationShutdownHooks.java:66) ~[?:?]
2026-11-27 14:07:19,900 INFO  org.apache.flink.runtime.blob.BlobServer - Stopped BLOB server.
`

func TestLastExceptionIsTheLastErrorsTrace(t *testing.T) {
	e := lastException(strings.NewReader(noMainLog), false)
	if e == nil {
		t.Fatal("no exception found")
	}
	got := e.String()
	for _, want := range []string{"org.apache.flink.util.FlinkException: Could not load the provided entrypoint class.",
		"caused by java.lang.ClassNotFoundException: no.such.Main", "'no.such.Main' was not found in the jar file"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	e = lastException(strings.NewReader(schemeLog), false)
	if e == nil || !strings.HasPrefix(e.Head, "org.apache.flink.runtime.client.JobInitializationException") {
		t.Fatalf("%+v: want the ERROR's trace, not the WARN's after it", e)
	}
	if got := e.String(); !strings.Contains(got, "UnsupportedFileSystemSchemeException: Could not find a file system implementation for scheme 'foo'") {
		t.Errorf("%q: want the scheme's exception", got)
	}
	// Without an ERROR, the last trace of any level.
	if e := lastException(strings.NewReader(strings.ReplaceAll(schemeLog, " ERROR ", " INFO  ")), false); e == nil || e.Head != "java.lang.IllegalStateException: Shutdown in progress" {
		t.Errorf("%+v", e)
	}
	if e := lastException(strings.NewReader("2026-11-27 14:07:19,900 INFO  x - all well\n"), false); e != nil {
		t.Errorf("%+v from a log without an exception", e)
	}
}

// The log is read from its end, at most maxLogTail bytes, and a huge line neither stops the scan nor
// reaches the message whole.
func TestLastExceptionReadsABoundedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobmanager.log")
	var b bytes.Buffer
	b.WriteString("2026-11-27 14:07:13,309 ERROR x - early\njava.lang.IllegalStateException: too early to be read\n")
	for b.Len() < maxLogTail+1000 {
		b.WriteString("2026-11-27 14:07:13,309 INFO  org.apache.flink.X - filler line of the log\n")
	}
	b.WriteString("2026-11-27 14:07:13,309 INFO  x - huge: " + strings.Repeat("y", 2*maxLogLine) + "\n")
	b.WriteString("2026-11-27 14:07:13,309 ERROR x - late\njava.lang.RuntimeException: " + strings.Repeat("z", 5000) + "\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	e := lastLoggedException(path)
	if e == nil || !strings.HasPrefix(e.Head, "java.lang.RuntimeException: zzz") {
		t.Fatalf("%+v", e)
	}
	if s := e.String(); len(s) > maxExceptionShown+10 {
		t.Errorf("shown %d bytes, want at most ~%d", len(s), maxExceptionShown)
	}
	if lastLoggedException(filepath.Dir(path)) != nil || lastLoggedException(path+".missing") != nil {
		t.Error("a directory or a missing file gave an exception")
	}
	// Up to an end: the bounded tail is the one before it, and what follows does not count.
	early := int64(strings.Index(b.String(), "INFO  x - huge"))
	if e := lastExceptionBefore(path, early); e != nil {
		t.Errorf("%+v: the early exception is more than MaxLogTail before the end, and the late one after it", e)
	}
	if e := lastExceptionBefore(path, maxLogTail/2); e == nil || e.Head != "java.lang.IllegalStateException: too early to be read" {
		t.Errorf("%+v: want the early exception, the last one before the end", e)
	}
}

// A JobManager that exits before its job ends is explained by its log and its stderr; a job that
// FAILED with no exception history (its JobMaster did not start) by its log.
func TestRunApplicationSaysWhyTheJobManagerEnded(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "jobmanager.log")
	if err := os.WriteFile(logFile, []byte(noMainLog), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := NewConfig()
	conf.Set(KeyShutdownOnFinish, "false")
	p := &Process{Role: RoleApplication, Conf: conf, LogFile: logFile,
		Argv: []string{"sh", "-c", "echo 'NOTE: Picked up JDK_JAVA_OPTIONS: -Dx' >&2; echo 'WARNING: System::setSecurityManager' >&2; echo 'SLF4J: Class path contains multiple SLF4J bindings.' >&2; echo 'Error: the JVM said so' >&2; exit 1"}}
	none := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"jobs":[]}`))
	}))
	defer none.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	_, err := RunApplication(ctx, p, &REST{URL: none.URL}, 10*time.Millisecond, time.Second, &out, &out)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"exit status 1", "jobmanager.log: org.apache.flink.util.FlinkException",
		"ClassNotFoundException: no.such.Main", "jobmanager.err: Error: the JVM said so", "exited before its job ended"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nlacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "setSecurityManager") || strings.Contains(err.Error(), "Picked up") || strings.Contains(err.Error(), "SLF4J") {
		t.Errorf("%v: the JVM's notices are not the failure", err)
	}

	const id = "0123456789abcdef0123456789abcdef"
	if err := os.WriteFile(logFile, []byte(schemeLog), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jobs/overview" {
			w.Write([]byte(`{"jobs":[{"jid":"` + id + `","state":"FAILED"}]}`))
			return
		}
		http.Error(w, `{"errors":["Job `+id+` not found"]}`, http.StatusNotFound)
	}))
	defer failed.Close()
	p.Argv = []string{"sleep", "600"}
	o, err := RunApplication(ctx, p, &REST{URL: failed.URL, Settle: 100 * time.Millisecond}, 10*time.Millisecond, 5*time.Second, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	if o.Job.State != "FAILED" || o.RootCause == nil || !strings.Contains(o.RootCause.String(), "UnsupportedFileSystemSchemeException") {
		t.Errorf("%+v %+v: want the log's exception as the root cause", o.Job, o.RootCause)
	}
}

// A Flink 2.3 job that FAILED while the REST API gave no root cause: the driver stops the JobManager,
// whose dispatcher then cancels the application still running and logs that cancellation after the
// job's failure (testdata/flink-2.3.0-jobmanager-*.log: a real JobManager's log on the mini cluster,
// cut at its SIGTERM). The root cause is the last exception logged before the stop, the job's, not
// the stop's CompletionException: CancellationException.
func TestRunApplicationExplainsAFailureByTheLogBeforeItsStop(t *testing.T) {
	const id = "252bb9f4eabd0a29267dd81cfa62015d"
	dir := t.TempDir()
	logFile := filepath.Join(dir, "jobmanager.log")
	failed, stopped := filepath.Join("testdata", "flink-2.3.0-jobmanager-job-failed.log"), filepath.Join("testdata", "flink-2.3.0-jobmanager-stopped.log")
	before, err := os.Stat(failed)
	if err != nil {
		t.Fatal(err)
	}
	conf := NewConfig()
	conf.Set(KeyShutdownOnFinish, "false")
	// The JobManager logs the job's failure, then, on SIGTERM, its stop.
	p := &Process{Role: RoleApplication, Conf: conf, LogFile: logFile, Argv: []string{"sh", "-c",
		`trap 'cat "$2" >>"$3"; exit 143' TERM; cat "$1" >>"$3"; while :; do sleep 0.1; done`, "jm", failed, stopped, logFile}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state := "RUNNING"
		if st, err := os.Stat(logFile); err == nil && st.Size() >= before.Size() {
			state = "FAILED" // once the failure is logged
		}
		switch r.URL.Path {
		case "/jobs/overview":
			w.Write([]byte(`{"jobs":[{"jid":"` + id + `","name":"yarn-am-flink-test fail","state":"` + state + `"}]}`))
		case "/jobs/" + id:
			w.Write([]byte(failedDetail(id)))
		case "/jobs/" + id + "/exceptions":
			w.Write(fixture(t, "flink-2.3.0-stale-job-exceptions.json")) // none recorded, as far as it says
		default:
			http.Error(w, `{"errors":["Not found: `+r.URL.Path+`"]}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	o, err := RunApplication(ctx, p, &REST{URL: srv.URL}, 10*time.Millisecond, 5*time.Second, &out, &out)
	if err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(logFile); err != nil || after.Size() <= before.Size() {
		t.Fatalf("the JobManager logged nothing on its stop (%v): the test proves nothing", err)
	}
	if e := lastLoggedException(logFile); e == nil || !strings.Contains(e.String(), "CancellationException") {
		t.Fatalf("the whole log's last exception is %v: want the stop's cancellation", e)
	}
	rc := o.RootCause
	if o.State() != "FAILED" || rc == nil {
		t.Fatalf("outcome %+v, root cause %+v: want FAILED with one", o, rc)
	}
	if !strings.Contains(rc.Cause, "java.lang.IllegalStateException: yarn-am-flink-test deliberate failure in subtask 0") || strings.Contains(rc.Cause, "CancellationException") {
		t.Errorf("root cause %q: want the job's IllegalStateException, from the log before the stop", rc.Cause)
	}
}
