// The Flink row of `make bench` (testdata/bench/README.md#the-flink-row): yarn-am's [flink] mode against
// Flink's own YARN application mode (flink run-application -t yarn-application), both on the running
// mini cluster, alternating, with the same job, TaskManagers, GPUs and memory.
//
// Definitions, the same for both tools:
//
//   - submit: the moment the client command starts (yarn-am submit --detach, or Flink's CliFrontend
//     JVM; the client's own start-up counts, a user waits for it).
//   - job RUNNING: the JobManager's timestamps.RUNNING of the job (REST /jobs/<id>), read as soon as
//     /jobs/overview, polled every 100 ms, shows the job; the observed time when that read fails.
//   - all subtasks RUNNING: the latest RUNNING timestamp of the job's subtasks
//     (/jobs/<id>/vertices/<v>/subtasktimes), read once /jobs/overview shows every subtask running or
//     finished; when the job ended between two polls, the JobManager's log line of the last subtask
//     that switched to RUNNING.
//   - AM / TaskManagers started: the NodeManagers' log line "transitioned from SCHEDULED to RUNNING" of the
//     AM container, and of the last of the N TaskManager containers.
//   - FINISHED: the ResourceManager's finishedTime of the application.
//   - peak RSS: VmHWM of the processes in the AM container, sampled from /proc every 50 ms: the one
//     that manages the TaskManagers (yarn-am's AM; Flink's JobManager, YarnApplicationClusterEntryPoint)
//     and the JobManager JVM; and the AM container's peak: the largest sum of its yarn-am and java
//     processes' VmRSS in one sample.
//
// The JobManager's REST address: Flink registers it with the ResourceManager as the tracking URL, so
// it is polled through the RM's web proxy (/proxy/<app>/); yarn-am's is the "Flink UI" link in
// `yarn-am status --json`.
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	yflink "github.com/yarn-am/yarn-am/framework/flink"
	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

const (
	toolFlinkYarnAM = "yarn-am"
	toolFlinkNative = "flink"
	flinkCLI        = "org.apache.flink.client.cli.CliFrontend"
	gpuDriver       = "org.apache.flink.externalresource.gpu.GPUDriverFactory"
	// The same sizes on both sides: the JobManager's process (in a container of 1024 MB, the mini
	// cluster's minimum allocation) and each TaskManager's process and container.
	flinkJMMiB = 768
	flinkTMMiB = 1024
)

// flinkConfig is the Flink row's set-up: flags, then what setupFlink derives.
type flinkConfig struct {
	home, jar         string
	pairs, warmup, tm int
	timeout           time.Duration

	java, version, hdfs    string
	confDir, hadoopConf    string // Flink's client conf dir; the Hadoop conf dir the Flink processes read
	clientCP, containerCP  string // the client's classpath; yarn.application.classpath for Flink's containers
	javaOpts               []string
	ownJVMOpts             string // -flink-own-jvm-opts: env.java.opts.jobmanager and .taskmanager of Flink's own runs
	libDirs, jobJarURI     string // yarn.provided.lib.dirs; the job's jar on HDFS (Flink's side)
	providedTar, yarnAMJob string // yarn-am's flink.provided archive; its generated job file
}

// flinkRun is one measured application of the Flink row.
type flinkRun struct {
	Tool, App, Final     string
	Pair                 int
	JobRunning           float64 // seconds from submit; -1 unknown
	JobRunningExact      bool    // from the JobManager's timestamp, not the poll
	AllRunning           float64
	AllRunningExact      bool
	AMStarted            float64 // seconds from submit until the AM container ran (NM log); -1 if unknown
	TMsStarted           float64 // seconds from submit until the last TaskManager container ran; -1 unless all did
	Finished             float64
	ManagerRSS, JMRSS    float64 // MiB
	ContainerRSS         float64 // MiB, the largest sum of the AM container's yarn-am and java processes' VmRSS in one sample
	Load1                float64
	TMContainers, GPULns int     // TaskManager containers seen RUNNING; YARN_AM_FLINK_GPU lines in their stdout
	Moments              moments // the waterfall's (waterfall.go)
}

// setupFlink writes the Flink client's configuration, uploads the distribution and the job to HDFS
// once for the whole run (Flink's lib/ and plugins/ for yarn.provided.lib.dirs, yarn-am's packed home
// for flink.provided, the job's jar) and writes yarn-am's job file.
func setupFlink(cfg config, fc *flinkConfig) error {
	h, err := flink.OpenHome(fc.home)
	if err != nil {
		return fmt.Errorf("-flink-home: %w (make flink-dist installs one)", err)
	}
	if _, err := os.Stat(fc.jar); err != nil {
		return fmt.Errorf("-flink-job: %w (make flink-job builds it)", err)
	}
	fc.version = h.Version
	fc.hdfs = os.Getenv("YARN_AM_HDFS")
	if fc.hdfs == "" {
		return fmt.Errorf("$YARN_AM_HDFS is not set: source the mini cluster's env file (. .minicluster/env)")
	}
	fc.java = "java"
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		fc.java = filepath.Join(jh, "bin", "java")
	}
	dir := filepath.Join(cfg.out, "flink")
	fc.confDir, fc.hadoopConf = filepath.Join(dir, "conf"), filepath.Join(dir, "hadoop-conf")

	// Flink's configuration: the home's JVM options (env.java.opts.all carries the --add-opens list
	// Java 17 needs, docs/flink.md#the-processes) and nothing else of the standalone defaults (their
	// localhost addresses would bind the YARN JobManager to loopback 127.0.0.1); the rest goes as -D.
	home, _, err := h.Config()
	if err != nil {
		return err
	}
	conf := flink.NewConfig()
	for _, k := range []string{flink.KeyJavaDefaultOpts, flink.KeyJavaOptsAll, flink.KeyJavaOptsLegacy} {
		if v, ok := home.Get(k); ok {
			conf.Set(k, v)
		}
	}
	fc.javaOpts = flink.JavaOptions(conf, flink.RoleApplication)
	// log4j.properties is shipped to the JobManager and TaskManagers (INFO into jobmanager.log and
	// taskmanager.log); the client logs to its stdout, where the application's id is read.
	if err := flink.WriteConfDir(fc.confDir, conf, h, nil); err != nil {
		return err
	}
	cli := "rootLogger.level = INFO\nrootLogger.appenderRef.console.ref = Console\nappender.console.name = Console\n" +
		"appender.console.type = Console\nappender.console.layout.type = PatternLayout\n" +
		"appender.console.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n\n"
	if err := os.WriteFile(filepath.Join(fc.confDir, "log4j-cli.properties"), []byte(cli), 0o644); err != nil {
		return err
	}
	appCP, err := hadoopConfForFlink(cfg.confDir, fc.hadoopConf)
	if err != nil {
		return err
	}
	// The client: Flink's lib/ (flink-dist last) and then the Hadoop classpath, as Flink's bin/flink
	// puts HADOOP_CLASSPATH after it; the containers: the cluster's yarn.application.classpath.
	fc.clientCP = h.Classpath(nil) + ":" + strings.Join(appCP, ":")
	fc.containerCP = strings.Join(appCP, ",")

	tar, err := yflink.HomeArchive(fc.home, flinkArchiveCache(), io.Discard)
	if err != nil {
		return err
	}
	base := "/bench/flink-" + fc.version
	fc.libDirs = fc.hdfs + base + "/lib;" + fc.hdfs + base + "/plugins"
	fc.jobJarURI = fc.hdfs + "/bench/" + filepath.Base(fc.jar)
	// flink.provided with the NameNode in the URI: `hdfs:///...` would reach the NodeManager without
	// one (testdata/bench/README.md#the-flink-row).
	fc.providedTar = fc.hdfs + base + ".tar"
	start := time.Now()
	for _, args := range [][]string{
		{"-mkdir", "-p", base},
		{"-put", "-f", filepath.Join(h.Dir, "lib"), h.PluginsDir, base + "/"},
		{"-put", "-f", fc.jar, "/bench/"},
		{"-put", "-f", tar, fc.providedTar},
	} {
		cmd := exec.Command(cfg.hadoopJava, append([]string{"org.apache.hadoop.fs.FsShell"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("hdfs dfs %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
		}
	}
	fmt.Printf("flink: Flink %s's lib/ and plugins/, its packed home and the job uploaded to %s/bench in %.1fs\n",
		fc.version, fc.hdfs, time.Since(start).Seconds())
	fc.yarnAMJob = filepath.Join(cfg.out, "jobs", "flink-yarn-am.toml")
	return writeFlinkJob(cfg, fc)
}

// hadoopConfForFlink writes the Hadoop configuration directory the Flink processes read and returns
// the Hadoop classpath with it in place of the cluster's. A mini cluster started before the harness
// left YARN's keys out of hdfs-site.xml (ConfigWriter.writeAllBut) has them there as they were before
// the ResourceManager started (yarn.resourcemanager.address 0.0.0.0:8032, no yarn.io/gpu resource
// type); Flink loads hdfs-site.xml after yarn-site.xml, so those would win. Here hdfs-site.xml is the
// complete yarn-site.xml, whichever cluster runs.
func hadoopConfForFlink(clusterConf, dst string) ([]string, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	for src, to := range map[string]string{"core-site.xml": "core-site.xml", "yarn-site.xml": "yarn-site.xml",
		"resource-types.xml": "resource-types.xml"} {
		b, err := os.ReadFile(filepath.Join(clusterConf, src))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dst, to), b, 0o644); err != nil {
			return nil, err
		}
		if src == "yarn-site.xml" {
			if err := os.WriteFile(filepath.Join(dst, "hdfs-site.xml"), b, 0o644); err != nil {
				return nil, err
			}
		}
	}
	cp := siteValue(filepath.Join(clusterConf, "yarn-site.xml"), "yarn.application.classpath")
	if cp == "" {
		return nil, fmt.Errorf("%s/yarn-site.xml has no yarn.application.classpath (the mini cluster's Hadoop classpath)", clusterConf)
	}
	out := []string{dst}
	for _, e := range strings.Split(cp, ",") {
		if e = strings.TrimSpace(e); e != "" && filepath.Clean(e) != filepath.Clean(clusterConf) {
			out = append(out, e)
		}
	}
	return out, nil
}

// siteValue reads one property of a Hadoop *-site.xml file; "" when it is absent.
func siteValue(path, name string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var c struct {
		Props []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if xml.Unmarshal(b, &c) != nil {
		return ""
	}
	for _, p := range c.Props {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// flinkArchiveCache is where yarn-am submit keeps packed Flink homes (docs/flink.md#the-flink-table),
// so the bench packs the home once with it.
func flinkArchiveCache() string {
	if d := os.Getenv("YARN_AM_CACHE"); d != "" {
		return filepath.Join(d, "flink-archives")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "yarn-am", "flink-archives")
}

// gpuEnvPath is the TaskManagers' PATH: the fake nvidia-smi's directory first (both tools' GPU
// discovery runs nvidia-smi from PATH, as on a node with the driver installed).
func gpuEnvPath(cfg config) string {
	return filepath.Dir(cfg.nvidiaSMI) + ":/usr/local/bin:/usr/bin:/bin"
}

// writeFlinkJob writes yarn-am's job: the same job, TaskManagers, GPUs and memory as Flink's command.
func writeFlinkJob(cfg config, fc *flinkConfig) error {
	body := fmt.Sprintf(`name = "bench-flink"
max-attempts = 1
"external-resources" = "gpu"
"external-resource.gpu.amount" = 1
"external-resource.gpu.yarn.config-key" = "yarn.io/gpu"
"external-resource.gpu.driver-factory.class" = %q
"external-resource.gpu.param.discovery-script.args" = "--enable-coordination-mode --coordination-dir %s"

[flink]
provided = %q
jar = %q
args = ["gpu", "%d"]

[flink.config]
"taskmanager.numberOfTaskSlots" = 1

[am]
memory = %d

[taskexecutor]
instances = %d
memory = %d
max-failures = 0

[taskexecutor.env]
PATH = %q
FAKE_GPU_COUNT = "4"
`, gpuDriver, filepath.Join(cfg.out, "flink", "gpu-coordination"), fc.providedTar, fc.jar, fc.tm,
		flinkJMMiB+256, fc.tm, flinkTMMiB, gpuEnvPath(cfg))
	if err := os.MkdirAll(filepath.Dir(fc.yarnAMJob), 0o755); err != nil {
		return err
	}
	return os.WriteFile(fc.yarnAMJob, []byte(body), 0o644)
}

// flinkCommand is Flink's own submission: CliFrontend run-application -t yarn-application, as
// bin/flink runs it, with the distribution and the job's jar already on HDFS.
func flinkCommand(cfg config, fc *flinkConfig, name string) *exec.Cmd {
	defs := []string{
		"yarn.provided.lib.dirs=" + fc.libDirs,
		"flink.yarn.application.classpath=" + fc.containerCP,
		"containerized.master.env.HADOOP_CONF_DIR=" + fc.hadoopConf,
		"containerized.taskmanager.env.HADOOP_CONF_DIR=" + fc.hadoopConf,
		"yarn.application.name=" + name,
		"yarn.application-attempts=1",
		fmt.Sprintf("jobmanager.memory.process.size=%dm", flinkJMMiB),
		fmt.Sprintf("taskmanager.memory.process.size=%dm", flinkTMMiB),
		"taskmanager.numberOfTaskSlots=1",
		"external-resources=gpu",
		"external-resource.gpu.amount=1",
		"external-resource.gpu.yarn.config-key=yarn.io/gpu",
		"external-resource.gpu.driver-factory.class=" + gpuDriver,
		"containerized.taskmanager.env.PATH=" + gpuEnvPath(cfg),
		"containerized.taskmanager.env.FAKE_GPU_COUNT=4",
	}
	if fc.ownJVMOpts != "" {
		defs = append(defs, "env.java.opts.jobmanager="+fc.ownJVMOpts, "env.java.opts.taskmanager="+fc.ownJVMOpts)
	}
	args := append([]string(nil), fc.javaOpts...)
	args = append(args, "-Dlog4j.configurationFile=file:"+filepath.Join(fc.confDir, "log4j-cli.properties"),
		"-cp", fc.clientCP, flinkCLI, "run-application", "-t", "yarn-application")
	for _, d := range defs {
		args = append(args, "-D"+d)
	}
	args = append(args, fc.jobJarURI, "gpu", strconv.Itoa(fc.tm))
	cmd := exec.Command(fc.java, args...)
	cmd.Env = append(os.Environ(), "FLINK_CONF_DIR="+fc.confDir, "FLINK_HOME="+fc.home,
		"FLINK_LIB_DIR="+filepath.Join(fc.home, "lib"), "FLINK_PLUGINS_DIR="+filepath.Join(fc.home, "plugins"),
		"HADOOP_CONF_DIR="+fc.hadoopConf)
	return cmd
}

// flinkBench runs the warm-up and the pairs, alternating yarn-am and Flink, and returns the table.
func flinkBench(cfg config, fc *flinkConfig) (string, error) {
	if err := setupFlink(cfg, fc); err != nil {
		return "", err
	}
	start := time.Now()
	tools := []string{toolFlinkYarnAM, toolFlinkNative}
	var runs []flinkRun
	for p := -fc.warmup; p <= fc.pairs; p++ {
		if p == 0 {
			continue
		}
		for _, tool := range tools {
			r, err := measureFlink(cfg, fc, tool, p)
			if err != nil {
				return "", err
			}
			what := fmt.Sprintf("pair %d", p)
			if p < 0 {
				what = "warm-up (not recorded)"
			} else {
				runs = append(runs, r)
			}
			fmt.Printf("[flink %5.0fs] %-7s %s: %s %s, AM started %.2fs, job RUNNING %.2fs, all subtasks RUNNING %.2fs, %d TMs started %.2fs, finished %.2fs, peak RSS manager %.1f / JobManager %.1f / AM container %.1f MiB, GPU lines %d (load %.2f)\n",
				time.Since(start).Seconds(), tool, what, r.App, r.Final, r.AMStarted, r.JobRunning, r.AllRunning, r.TMContainers, r.TMsStarted, r.Finished,
				r.ManagerRSS, r.JMRSS, r.ContainerRSS, r.GPULns, r.Load1)
			fmt.Printf("        waterfall (s from submit): %s\n", r.Moments)
		}
	}
	if err := writeFlinkCSV(cfg, runs); err != nil {
		return "", err
	}
	wf, err := writeWaterfall(cfg, fc, runs)
	if err != nil {
		return "", err
	}
	return flinkReport(fc, runs) + wf, nil
}

// measureFlink submits one application with tool and follows it to its end.
func measureFlink(cfg config, fc *flinkConfig, tool string, pair int) (flinkRun, error) {
	r := flinkRun{Tool: tool, Pair: pair, JobRunning: -1, AllRunning: -1, AMStarted: -1, TMsStarted: -1, Finished: -1, Load1: load1()}
	name := fmt.Sprintf("bench-flink-%s-%d", tool, pair)
	if pair < 0 {
		name = fmt.Sprintf("bench-flink-%s-warmup%d", tool, -pair)
	}
	var cmd *exec.Cmd
	if tool == toolFlinkYarnAM {
		cmd = exec.Command(cfg.yarnAM, "submit", fc.yarnAMJob, "--detach", "--name", name)
	} else {
		cmd = flinkCommand(cfg, fc, name)
	}
	logOffset := fileSize(cfg.clusterLog)
	cl, err := startClient(cmd, filepath.Join(cfg.out, "logs", name+".log"), tool, fc.timeout)
	if err != nil {
		return r, err
	}
	defer cl.log.Close()
	r.App = cl.app
	submit, clientDone := cl.submit, cl.done

	ctx, cancel := context.WithTimeout(context.Background(), fc.timeout)
	defer cancel()
	sctx, stopSampling := context.WithCancel(ctx)
	samp := make(chan flinkRSS, 1)
	go func() { samp <- sampleFlinkAM(sctx, r.App, tool) }()
	type times struct {
		job, all           float64
		jobExact, allExact bool
	}
	polled := make(chan times, 1)
	go func() {
		var t times
		t.job, t.all, t.jobExact, t.allExact = pollJobTimes(sctx, cfg, r.App, tool, submit)
		polled <- t
	}()
	rep, err := waitFinished(ctx, cfg.rmWeb, r.App)
	if err != nil {
		exec.Command(cfg.yarnAM, "kill", r.App).Run()
		r.Final = "TIMEOUT"
	} else {
		r.Final = rep.FinalStatus
		r.Finished = float64(rep.FinishedTime)/1000 - float64(submit.UnixNano())/1e9
	}
	// The AM container's processes end with the application; a moment later nothing is left to sample.
	time.Sleep(time.Second)
	stopSampling()
	s, t := <-samp, <-polled
	r.ManagerRSS, r.JMRSS, r.ContainerRSS = s.manager, s.jm, s.total
	r.JobRunning, r.AllRunning, r.JobRunningExact, r.AllRunningExact = t.job, t.all, t.jobExact, t.allExact
	select {
	case <-clientDone:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-clientDone
	}
	ev, err := containerEvents(cfg.clusterLog, logOffset, r.App)
	if err != nil {
		return r, err
	}
	var last time.Time
	for id, e := range ev {
		if e.running.IsZero() {
			continue
		}
		if strings.HasSuffix(id, "_000001") {
			r.AMStarted = e.running.Sub(submit).Seconds()
			continue
		}
		r.TMContainers++
		if e.running.After(last) {
			last = e.running
		}
	}
	if r.TMContainers >= fc.tm {
		r.TMsStarted = last.Sub(submit).Seconds()
	}
	r.GPULns = gpuLines(r.App)
	if r.AllRunning < 0 {
		// The job ran and ended between two polls (or the JobManager went before the answer): its log
		// has the same transitions, on the same clock.
		if t, ok := jmLogAllRunning(r.App); ok {
			r.AllRunning, r.AllRunningExact = t.Sub(submit).Seconds(), true
		}
	}
	if err := waterfallMoments(cfg, fc, &r, logOffset, submit, s); err != nil {
		return r, err
	}
	return r, nil
}

// waterfallMoments fills r.Moments (waterfall.go) from the cluster's log, the application's container
// logs, the samples of its AM container's processes and the REST times already in r.
func waterfallMoments(cfg config, fc *flinkConfig, r *flinkRun, logOffset int64, submit time.Time, s flinkRSS) error {
	r.Moments = unknownMoments()
	r.Moments.setFirst(msAMProcess, s.amStart, submit)
	r.Moments.setFirst(msJMJVM, s.jmStart, submit)
	r.Moments[msJobRunning], r.Moments[msAllRunning] = r.JobRunning, r.AllRunning
	f, err := os.Open(cfg.clusterLog)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(logOffset, io.SeekStart); err != nil {
		return err
	}
	if err := rmMoments(f, r.App, fc.tm, submit, &r.Moments); err != nil {
		return err
	}
	return logMoments(strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ","), r.App, r.Tool, fc.tm, submit, &r.Moments)
}

// jmLogAllRunning returns the time of the last "switched from INITIALIZING to RUNNING" line in the
// JobManager's log in the application's AM container (both tools write jobmanager.log there).
func jmLogAllRunning(app string) (time.Time, bool) {
	var last time.Time
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		logs, _ := filepath.Glob(filepath.Join(d, app, "container_*_000001", "jobmanager.log"))
		for _, l := range logs {
			f, err := os.Open(l)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 4<<20)
			for sc.Scan() {
				line := sc.Text()
				if !strings.Contains(line, "switched from INITIALIZING to RUNNING") {
					continue
				}
				if m := logTimeRE.FindStringSubmatch(line); m != nil {
					if t, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local); err == nil && t.After(last) {
						last = t
					}
				}
			}
			f.Close()
		}
	}
	return last, !last.IsZero()
}

// gpuLines counts the test job's YARN_AM_FLINK_GPU lines in the application's container stdout files
// (yarn-am's TaskManagers write stdout, Flink's taskmanager.out): one per subtask when the job ran.
func gpuLines(app string) int {
	n := 0
	for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
		files, _ := filepath.Glob(filepath.Join(d, app, "container_*", "*"))
		for _, f := range files {
			if b := filepath.Base(f); b != "stdout" && b != "taskmanager.out" {
				continue
			}
			data, err := os.ReadFile(f)
			if err == nil {
				n += strings.Count(string(data), "YARN_AM_FLINK_GPU ")
			}
		}
	}
	return n
}

// jobsOverview is the part of Flink's /jobs/overview the bench reads.
type jobsOverview struct {
	Jobs []struct {
		ID    string         `json:"jid"`
		State string         `json:"state"`
		Tasks map[string]int `json:"tasks"`
	} `json:"jobs"`
}

// restBase returns the JobManager's REST base URL, or "" while it is not known yet.
func restBase(ctx context.Context, cfg config, app, tool string) string {
	if tool == toolFlinkNative {
		return cfg.rmWeb + "/proxy/" + app + "/"
	}
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(c, cfg.yarnAM, "status", "--json", app).Output()
	if err != nil {
		return ""
	}
	var st struct {
		AM struct {
			Links []struct{ Name, URL string } `json:"links"`
		} `json:"am"`
	}
	if json.Unmarshal(out, &st) != nil {
		return ""
	}
	for _, l := range st.AM.Links {
		if l.Name == "Flink UI" && l.URL != "" {
			return strings.TrimSuffix(l.URL, "/") + "/"
		}
	}
	return ""
}

// getJSON reads a small JSON document; an HTML page (the RM's proxy before the AM registered) fails.
func getJSON(ctx context.Context, url string, v any) error {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(c, http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v)
}

// pollJobTimes polls the JobManager's /jobs/overview every 100 ms and returns the seconds from submit
// to the job's RUNNING and to the last subtask's RUNNING (-1 when never seen), and whether each came
// from the JobManager's own timestamps (else: the poll that first saw it).
func pollJobTimes(ctx context.Context, cfg config, app, tool string, submit time.Time) (job, all float64, jobExact, allExact bool) {
	job, all = -1, -1
	since := func(ms int64) float64 { return float64(ms)/1000 - float64(submit.UnixNano())/1e9 }
	base := ""
	nextBase := time.Time{}
	for ctx.Err() == nil {
		if base == "" && time.Now().After(nextBase) {
			base = restBase(ctx, cfg, app, tool)
			nextBase = time.Now().Add(250 * time.Millisecond)
		}
		var ov jobsOverview
		if base != "" && getJSON(ctx, base+"jobs/overview", &ov) == nil && len(ov.Jobs) > 0 {
			now := time.Since(submit).Seconds()
			j := ov.Jobs[0]
			if job < 0 && j.State != "CREATED" && j.State != "INITIALIZING" {
				job = now
				var d struct {
					Timestamps map[string]int64 `json:"timestamps"`
				}
				if getJSON(ctx, base+"jobs/"+j.ID, &d) == nil && d.Timestamps["RUNNING"] > 0 {
					job, jobExact = since(d.Timestamps["RUNNING"]), true
				}
			}
			total := j.Tasks["total"]
			if total > 0 && j.Tasks["running"]+j.Tasks["finished"] == total {
				all = now
				if last := lastSubtaskRunning(ctx, base, j.ID); last > 0 {
					all, allExact = since(last), true
				}
				return job, all, jobExact, allExact
			}
			switch j.State {
			case "FAILED", "CANCELED", "FINISHED":
				return job, all, jobExact, allExact
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return job, all, jobExact, allExact
}

// lastSubtaskRunning returns the latest RUNNING timestamp (ms) over all subtasks of job, 0 when the
// JobManager does not answer or a subtask has none.
func lastSubtaskRunning(ctx context.Context, base, job string) int64 {
	var d struct {
		Vertices []struct {
			ID string `json:"id"`
		} `json:"vertices"`
	}
	if getJSON(ctx, base+"jobs/"+job, &d) != nil || len(d.Vertices) == 0 {
		return 0
	}
	var last int64
	for _, v := range d.Vertices {
		var st struct {
			Subtasks []struct {
				Timestamps map[string]int64 `json:"timestamps"`
			} `json:"subtasks"`
		}
		if getJSON(ctx, base+"jobs/"+job+"/vertices/"+v.ID+"/subtasktimes", &st) != nil || len(st.Subtasks) == 0 {
			return 0
		}
		for _, s := range st.Subtasks {
			t := s.Timestamps["RUNNING"]
			if t <= 0 {
				return 0
			}
			last = max(last, t)
		}
	}
	return last
}

type flinkRSS struct {
	manager, jm, total float64
	// When the AM's process (yarn-am am; Flink's JobManager JVM) and the JobManager's JVM started
	// (zero when not seen).
	amStart, jmStart time.Time
}

// sampleFlinkAM samples the AM container's yarn-am and java processes every 50 ms until ctx ends
// (looking for new ones every 500 ms): their peak VmHWM by role.
func sampleFlinkAM(ctx context.Context, app, tool string) flinkRSS {
	amDir := "/appcache/" + app + "/container_"
	appNum := strings.TrimPrefix(app, "application_")
	type proc struct {
		role  string // manager, jm, other
		hwm   int64
		start time.Time
		entry bool // a java process running a Flink cluster entry point (the JobManager)
	}
	procs := map[int]*proc{}
	var nextScan time.Time
	var peakSum int64 // KiB: the largest sum of the processes' VmRSS in one sample
	for ctx.Err() == nil {
		if time.Now().After(nextScan) {
			for _, pid := range amProcs(amDir, appNum) {
				if procs[pid] != nil {
					continue
				}
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				args := strings.Split(string(cmdline), "\x00")
				role := ""
				switch strings.TrimSpace(string(comm)) {
				case "java":
					role = "jm"
				case "yarn-am":
					role = "other" // the flink-jobmanager driver
					if len(args) > 1 && args[1] == "am" {
						role = "manager"
					}
				}
				if role != "" {
					p := &proc{role: role, entry: role == "jm" && isJobManagerJVM(string(cmdline))}
					p.start, _ = procStart(pid)
					procs[pid] = p
				}
			}
			nextScan = time.Now().Add(500 * time.Millisecond)
		}
		var sum int64
		for pid, p := range procs {
			if hwm, _, ok := procStats(pid); ok {
				p.hwm = max(p.hwm, hwm)
				sum += vmRSS(pid)
			}
		}
		peakSum = max(peakSum, sum)
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	s := flinkRSS{total: float64(peakSum) / 1024}
	earliest := func(t *time.Time, at time.Time) {
		if !at.IsZero() && (t.IsZero() || at.Before(*t)) {
			*t = at
		}
	}
	for _, p := range procs {
		if p.entry {
			earliest(&s.jmStart, p.start)
			if tool == toolFlinkNative {
				earliest(&s.amStart, p.start)
			}
		}
		if p.role == "manager" {
			earliest(&s.amStart, p.start)
		}
		mib := float64(p.hwm) / 1024
		switch {
		case p.role == "jm":
			s.jm = max(s.jm, mib)
			if tool == toolFlinkNative {
				s.manager = max(s.manager, mib) // Flink's JobManager asks YARN for the TaskManagers
			}
		case p.role == "manager":
			s.manager = max(s.manager, mib)
		}
	}
	return s
}

// vmRSS is the resident memory (KiB) of pid now; 0 once it is gone.
func vmRSS(pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// amProcs lists the processes whose working directory is the application's AM container (attempt 1:
// container_[eNN_]<ts>_<seq>_01_000001).
func amProcs(amDir, appNum string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err != nil || !strings.Contains(cwd, amDir) {
			continue
		}
		c := cwd[strings.LastIndex(cwd, "/")+1:]
		if strings.Contains(c, appNum+"_01_") && strings.HasSuffix(c, "_000001") {
			out = append(out, pid)
		}
	}
	return out
}

// flinkFields are the Flink row's columns: name, unit, value of a run.
var flinkFields = []struct {
	name, unit, csv string
	f               func(flinkRun) float64
}{
	{"submit → job RUNNING", "s", "submit_to_job_running_s", func(r flinkRun) float64 { return r.JobRunning }},
	{"submit → AM container started", "s", "submit_to_am_started_s", func(r flinkRun) float64 { return r.AMStarted }},
	{"submit → all subtasks RUNNING", "s", "submit_to_all_subtasks_running_s", func(r flinkRun) float64 { return r.AllRunning }},
	{"submit → TaskManager containers started", "s", "submit_to_tms_started_s", func(r flinkRun) float64 { return r.TMsStarted }},
	{"submit → FINISHED", "s", "submit_to_finished_s", func(r flinkRun) float64 { return r.Finished }},
	{"peak RSS of the TaskManagers' manager", "MiB", "manager_peak_rss_mib", func(r flinkRun) float64 { return r.ManagerRSS }},
	{"peak RSS of the JobManager JVM", "MiB", "jobmanager_peak_rss_mib", func(r flinkRun) float64 { return r.JMRSS }},
	{"peak RSS of the AM container (its yarn-am and java processes together)", "MiB", "am_container_peak_rss_mib", func(r flinkRun) float64 { return r.ContainerRSS }},
}

// flinkMed is the median of field over tool's successful runs.
func flinkMed(runs []flinkRun, tool string, field func(flinkRun) float64) float64 {
	var v []float64
	for _, r := range runs {
		if r.Tool == tool && r.Final == "SUCCEEDED" && field(r) >= 0 {
			v = append(v, field(r))
		}
	}
	return median(v)
}

func writeFlinkCSV(cfg config, runs []flinkRun) error {
	f, err := os.Create(filepath.Join(cfg.out, "flink.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	head := []string{"tool", "pair", "app", "final_status"}
	for _, fl := range flinkFields {
		head = append(head, fl.csv)
	}
	w.Write(append(head, "job_running_from_jobmanager", "all_running_from_jobmanager", "taskmanager_containers", "gpu_lines", "load1"))
	for _, r := range runs {
		row := []string{r.Tool, strconv.Itoa(r.Pair), r.App, r.Final}
		for _, fl := range flinkFields {
			row = append(row, ff(fl.f(r)))
		}
		w.Write(append(row, strconv.FormatBool(r.JobRunningExact), strconv.FormatBool(r.AllRunningExact),
			strconv.Itoa(r.TMContainers), strconv.Itoa(r.GPULns), ff(r.Load1)))
	}
	// The medians and ratios, one row each, in the same columns.
	for _, agg := range []string{"median-" + toolFlinkYarnAM, "median-" + toolFlinkNative, "ratio-yarn-am/flink"} {
		row := []string{agg, "", "", ""}
		for _, fl := range flinkFields {
			y, k := flinkMed(runs, toolFlinkYarnAM, fl.f), flinkMed(runs, toolFlinkNative, fl.f)
			switch agg {
			case "median-" + toolFlinkYarnAM:
				row = append(row, ff(y))
			case "median-" + toolFlinkNative:
				row = append(row, ff(k))
			default:
				row = append(row, ratio(y, k))
			}
		}
		w.Write(append(row, "", "", "", "", ""))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// flinkReport is the Flink row's table: medians, ratios and the target.
func flinkReport(fc *flinkConfig, runs []flinkRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nFlink %s: yarn-am's [flink] mode against Flink's own YARN application mode (run-application -t yarn-application), "+
		"%d TaskManagers × 1 GPU, %d MiB each, JobManager %d MiB, the test job `gpu %d`; medians of %d pair(s) "+
		"(yarn-am / Flink = ratio; below 1 means yarn-am is faster or smaller)\n\n", fc.version, fc.tm, flinkTMMiB, flinkJMMiB, fc.tm, fc.pairs)
	b.WriteString("| metric | yarn-am | Flink | yarn-am / Flink |\n| --- | ---: | ---: | ---: |\n")
	for _, fl := range flinkFields {
		y, k := flinkMed(runs, toolFlinkYarnAM, fl.f), flinkMed(runs, toolFlinkNative, fl.f)
		fmt.Fprintf(&b, "| %s (%s) | %s | %s | **%s** |\n", fl.name, fl.unit, num(y), num(k), ratio(y, k))
	}
	// flinkFields[0] is the time to job RUNNING, the target's measure.
	y, k := flinkMed(runs, toolFlinkYarnAM, flinkFields[0].f), flinkMed(runs, toolFlinkNative, flinkFields[0].f)
	verdict := "not measured"
	if y >= 0 && k > 0 {
		verdict = fmt.Sprintf("NOT met (%.2f×)", y/k)
		if y <= 0.5*k {
			verdict = fmt.Sprintf("met (%.2f×)", y/k)
		}
	}
	fmt.Fprintf(&b, "\nTarget yarn-am ≤ 0.5 × Flink's time from submit to job RUNNING: %s.\n", verdict)
	failed, exact, seen := 0, 0, 0
	for _, r := range runs {
		if r.Final != "SUCCEEDED" || r.GPULns != fc.tm {
			failed++
		}
		for _, e := range [][2]bool{{r.JobRunning >= 0, r.JobRunningExact}, {r.AllRunning >= 0, r.AllRunningExact}} {
			if e[0] {
				seen++
				if e[1] {
					exact++
				}
			}
		}
	}
	fmt.Fprintf(&b, "%d of %d RUNNING times are the JobManager's own (REST timestamps or its log), the others the poll that saw them (100 ms).\n", exact, seen)
	if failed > 0 {
		fmt.Fprintf(&b, "%d run(s) did not succeed or did not print one GPU line per subtask; see flink.csv (unsuccessful runs are left out of the medians).\n", failed)
	}
	fmt.Fprintf(&b, "Load average (1 min) at the runs' starts: %s.\n", flinkLoad(runs))
	return b.String()
}

func flinkLoad(runs []flinkRun) string {
	r := make([]run, len(runs))
	for i, f := range runs {
		r[i].Load1 = f.Load1
	}
	return loadRange(r)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// defaultFlinkHome is make flink-dist's home: $YARN_AM_FLINK_HOME, else flink-1.20.5 in yarn-am's cache.
func defaultFlinkHome() string {
	if h := os.Getenv("YARN_AM_FLINK_HOME"); h != "" {
		return h
	}
	if d := os.Getenv("YARN_AM_CACHE"); d != "" {
		return filepath.Join(d, "flink-1.20.5")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "yarn-am", "flink-1.20.5")
}
