// The demand comparison (`-mode flink-demand`, testdata/bench/README.md#the-demand-comparison):
// how many TaskManagers run, step by step, when the job's slot demand changes, with yarn-am's
// [flink] taskmanagers = "demand" and with Flink's own YARN application mode (its active resource
// manager), on the running mini cluster. Both run the test job's stream mode on the adaptive
// scheduler, one slot per TaskManager, parallelism.default 2, resourcemanager.taskmanager-timeout
// 5 s; the steps set the job's parallelism to 3 and then 1 (yarn-am scale, which sets the job's upper
// bound; PUT /jobs/<id>/resource-requirements on Flink's side). Each step is read from the
// JobManager's REST API: the job's parallelism and the TaskManagers registered (/taskmanagers).
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	flink "github.com/yarn-am/yarn-am/framework/flink/flinkdist"
)

// demandDefines are the Flink keys both sides run with.
var demandDefines = []string{
	"jobmanager.scheduler=adaptive",
	"parallelism.default=2",
	"resourcemanager.taskmanager-timeout=5 s",
	"jobmanager.adaptive-scheduler.scaling-interval.min=0 s",
	"jobmanager.adaptive-scheduler.resource-stabilization-timeout=5 s",
	"restart-strategy.type=fixed-delay",
	"restart-strategy.fixed-delay.attempts=100",
	"restart-strategy.fixed-delay.delay=1 s",
}

// demandStep is one step's outcome on one side.
type demandStep struct {
	what         string
	parallelism  int
	taskManagers int
	seconds      float64 // from the step's start until the job ran at its parallelism and the TaskManagers settled
	settled      bool    // the TaskManagers reached the count the parallelism needs (1 slot each)
}

// flinkDemandBench runs both sides one after the other and returns the table.
func flinkDemandBench(cfg config, fc *flinkConfig) (string, error) {
	if err := setupFlink(cfg, fc); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nTaskManagers on demand (Flink %s, the stream job on the adaptive scheduler, 1 slot each, taskmanager-timeout 5 s; load %.2f at the start)\n\n", fc.version, load1())
	fmt.Fprintf(&b, "| step | yarn-am: parallelism / TaskManagers / seconds | Flink's YARN mode: parallelism / TaskManagers / seconds |\n|---|---|---|\n")
	sides := map[string][]demandStep{}
	for _, tool := range []string{toolFlinkYarnAM, toolFlinkNative} {
		steps, err := demandRun(cfg, fc, tool)
		if err != nil {
			return "", fmt.Errorf("%s: %w", tool, err)
		}
		sides[tool] = steps
	}
	for i := range sides[toolFlinkYarnAM] {
		cell := func(tool string) string {
			if i >= len(sides[tool]) {
				return "—"
			}
			s := sides[tool][i]
			note := ""
			if !s.settled {
				note = " (not settled)"
			}
			return fmt.Sprintf("%d / %d / %.0f%s", s.parallelism, s.taskManagers, s.seconds, note)
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", sides[toolFlinkYarnAM][i].what, cell(toolFlinkYarnAM), cell(toolFlinkNative))
	}
	return b.String(), nil
}

// demandRun submits the job with tool, runs the steps and kills the application.
func demandRun(cfg config, fc *flinkConfig, tool string) ([]demandStep, error) {
	name := "bench-demand-" + tool
	var cmd *exec.Cmd
	if tool == toolFlinkYarnAM {
		job, err := writeDemandJob(cfg, fc)
		if err != nil {
			return nil, err
		}
		args := []string{"submit", job, "--detach", "--name", name}
		for _, d := range demandDefines {
			args = append(args, "-D", d)
		}
		cmd = exec.Command(cfg.yarnAM, args...)
	} else {
		cmd = flinkCommand(cfg, fc, name)
		n := len(cmd.Args)
		// flinkCommand ends with the jar and the gpu job's arguments: the stream job instead, and the
		// demand's keys before the jar.
		jar := cmd.Args[n-3]
		args := append([]string(nil), cmd.Args[:n-3]...)
		for _, d := range demandDefines {
			args = append(args, "-D"+d)
		}
		cmd.Args = append(args, jar, "stream")
	}
	cl, err := startClient(cmd, filepath.Join(cfg.out, "logs", name+".log"), tool, fc.timeout)
	if err != nil {
		return nil, err
	}
	defer cl.log.Close()
	defer exec.Command(cfg.yarnAM, "kill", cl.app).Run()
	ctx, cancel := context.WithTimeout(context.Background(), 3*fc.timeout)
	defer cancel()
	base, err := demandREST(ctx, cfg, cl.app, tool)
	if err != nil {
		return nil, err
	}
	rest := &flink.REST{URL: base}
	fmt.Printf("flink-demand: %s %s, JobManager at %s\n", tool, cl.app, base)
	var steps []demandStep
	s, err := demandSettle(ctx, rest, "submit → parallelism 2", 2, cl.submit)
	steps = append(steps, s)
	if err != nil {
		return steps, err
	}
	for _, p := range []int{3, 1} {
		start := time.Now()
		if tool == toolFlinkYarnAM {
			out, err := exec.CommandContext(ctx, cfg.yarnAM, "scale", cl.app, strconv.Itoa(p)).CombinedOutput()
			if err != nil {
				return steps, fmt.Errorf("yarn-am scale %d: %w: %s", p, err, lastLines(string(out), 3))
			}
		} else if err := demandSetUpper(ctx, rest, p); err != nil {
			return steps, err
		}
		s, err := demandSettle(ctx, rest, fmt.Sprintf("parallelism → %d", p), p, start)
		steps = append(steps, s)
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// writeDemandJob is yarn-am's side: the bench job with the stream mode, taskmanagers = "demand" and up
// to 3 TaskManagers.
func writeDemandJob(cfg config, fc *flinkConfig) (string, error) {
	body, err := os.ReadFile(fc.yarnAMJob)
	if err != nil {
		return "", err
	}
	s := strings.Replace(string(body), "[flink]\n", "[flink]\ntaskmanagers = \"demand\"\n", 1)
	s = regexp.MustCompile(`args = \[.*\]`).ReplaceAllString(s, `args = ["stream"]`)
	s = regexp.MustCompile(`(?m)^instances = \d+$`).ReplaceAllString(s, "instances = 3")
	p := filepath.Join(cfg.out, "jobs", "flink-demand-yarn-am.toml")
	return p, os.WriteFile(p, []byte(s), 0o644)
}

// restListening is the JobManager's log line with its REST address (both sides write jobmanager.log
// in the AM container).
var restListening = regexp.MustCompile(`Rest endpoint listening at ([^:\s]+):(\d+)`)

// demandREST finds the JobManager's REST address: yarn-am's "Flink UI" link, or the line in Flink's
// jobmanager.log (the RM's web proxy may not pass a PUT on).
func demandREST(ctx context.Context, cfg config, app, tool string) (string, error) {
	for ctx.Err() == nil {
		if tool == toolFlinkYarnAM {
			if b := restBase(ctx, cfg, app, tool); b != "" {
				return strings.TrimSuffix(b, "/"), nil
			}
		} else {
			for _, d := range strings.Split(os.Getenv("YARN_AM_NM_LOG_DIRS"), ",") {
				logs, _ := filepath.Glob(filepath.Join(d, app, "*_000001", "jobmanager.log"))
				for _, l := range logs {
					if m := grepFirst(l, restListening); m != nil {
						return "http://" + m[1] + ":" + m[2], nil
					}
				}
			}
		}
		time.Sleep(time.Second)
	}
	return "", fmt.Errorf("%s: the JobManager's REST address not found: %w", app, ctx.Err())
}

func grepFirst(path string, re *regexp.Regexp) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m
		}
	}
	return nil
}

// demandSettle waits until the job runs at parallelism p and as many TaskManagers as it needs are
// registered (one slot each), at most 3 minutes; it returns what it saw last.
func demandSettle(ctx context.Context, rest *flink.REST, what string, p int, start time.Time) (demandStep, error) {
	s := demandStep{what: what}
	deadline := time.Now().Add(3 * time.Minute)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		jobs, err := rest.Jobs(c)
		if err == nil && len(jobs) == 1 && jobs[0].State == "RUNNING" {
			if d, err := rest.JobDetail(c, jobs[0].ID); err == nil {
				s.parallelism = d.Parallelism()
			}
		}
		if tms, err := rest.TaskManagers(c); err == nil {
			s.taskManagers = len(tms)
		}
		cancel()
		s.seconds = time.Since(start).Seconds()
		if s.parallelism == p && s.taskManagers == p {
			s.settled = true
			return s, nil
		}
		time.Sleep(time.Second)
	}
	return s, nil
}

// demandSetUpper sets every vertex's upper bound to p, as yarn-am scale does on its side.
func demandSetUpper(ctx context.Context, rest *flink.REST, p int) error {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	jobs, err := rest.Jobs(c)
	if err != nil || len(jobs) != 1 {
		return fmt.Errorf("the job to rescale: %v (%d jobs)", err, len(jobs))
	}
	bounds, err := rest.ResourceRequirements(c, jobs[0].ID)
	if err != nil {
		return err
	}
	for v := range bounds {
		bounds[v] = flink.Bounds{Lower: 1, Upper: p}
	}
	return rest.SetResourceRequirements(c, jobs[0].ID, bounds)
}
