//go:build integration

package am_test

// docs/quickstart-ml.md and the README's minimal job, run as written on the mini cluster: the files
// the pages show are byte for byte the ones under testdata/quickstart that the tests submit, and every
// `bin/yarn-am` command of the quick start runs, in the page's order, from the repository root
// through the real binary (YARN_AM_BIN), its output checked against what the page says it shows.
// The torchrun step uses the cached torch environment (YARN_AM_TORCH_PYTHON, as
// am/torch_integration_test.go does).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/e2e"
)

// qsDocFileCaption is the line that names the file a fenced block shows:
// [`testdata/quickstart/gpus.py`](../testdata/quickstart/gpus.py):
var qsDocFileCaption = regexp.MustCompile("^\\[`(testdata/quickstart/[^`]+)`\\]\\(\\.\\./testdata/quickstart/[^)]+\\):$")

// The files docs/quickstart-ml.md shows are the files the test runs.
func TestQuickstartFilesAreThePagesBlocks(t *testing.T) {
	shown := map[string]bool{}
	for _, b := range e2e.QSBlocks(t, e2e.QSReadPage(t, "docs/quickstart-ml.md")) {
		m := qsDocFileCaption.FindStringSubmatch(b.Caption)
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(e2e.QuickstartRoot, m[1]))
		require.NoError(t, err, "the page shows %s", m[1])
		assert.Equal(t, string(data), b.Body, "%s: the page's block and the file differ", m[1])
		shown[m[1]] = true
	}
	var names []string
	for n := range shown {
		names = append(names, n)
	}
	sort.Strings(names)
	assert.Equal(t, []string{
		"testdata/quickstart/driver.py", "testdata/quickstart/driver.toml", "testdata/quickstart/gpus.py",
		"testdata/quickstart/gpus.toml", "testdata/quickstart/torchrun.toml",
	}, names, "the files the page shows")
}

// quickstartStep is one command of the page, with the application id written as APP, and what
// its output must show. logs steps are retried: right after the end the NodeManagers may still be
// uploading (the page says so).
type quickstartStep struct {
	cmd     string
	timeout time.Duration
	check   func(r e2e.Result) error
}

func qsWantSucceeded(r e2e.Result, lines ...string) error {
	if r.Code != 0 {
		return fmt.Errorf("exit %d, want 0", r.Code)
	}
	for _, l := range lines {
		if !strings.Contains(r.Stdout, l) {
			return fmt.Errorf("the output lacks %q", l)
		}
	}
	return nil
}

var (
	qsGPUsLine        = regexp.MustCompile(`^(127\.0\.0\.\d+): gpus ([0-3],[0-3]) \(uuids (GPU-[0-9a-f-]+),(GPU-[0-9a-f-]+)\) CUDA_VISIBLE_DEVICES=([0-3],[0-3])$`)
	quickstartDDPLine = regexp.MustCompile(`^ddp: rank=([0-3]) world=4 local_rank=([01]) cuda_visible_devices=([01]) container_gpus=[0-3],[0-3] .* ok=true$`)
	qsDriverLine      = regexp.MustCompile(`^driver: (container_\S+) on (\S+) exited 0 with gpus [0-3],[0-3]$`)
	qsResInfoLine     = regexp.MustCompile(`resource-info: TaskExecutor container_\S+ on \S+ has gpu [0-3],[0-3]\n`)
)

func quickstartSteps() []quickstartStep {
	return []quickstartStep{
		{"check testdata/quickstart/gpus.toml", time.Minute, func(r e2e.Result) error {
			return qsWantSucceeded(r, "OK: job quickstart-gpus fits the cluster: 2 TaskExecutor(s) of memory-mb=256, vcores=1, yarn.io/gpu=2")
		}},
		{"submit testdata/quickstart/gpus.toml", 5 * time.Minute, func(r e2e.Result) error {
			if n := len(qsResInfoLine.FindAllString(r.Stdout, -1)); n != 2 {
				return fmt.Errorf("%d resource-info lines with two GPUs, want 2", n)
			}
			return qsWantSucceeded(r, "finished: application finished: SUCCEEDED: all 2 TaskExecutors exited with code 0", "final status SUCCEEDED", "tracking URL http://")
		}},
		{"follow APP", time.Minute, func(r e2e.Result) error { return qsWantSucceeded(r, ": final status SUCCEEDED") }},
		{"status APP", time.Minute, func(r e2e.Result) error {
			return qsWantSucceeded(r, "(quickstart-gpus)", "State:        FINISHED, final status SUCCEEDED", "Diagnostics:  all 2 TaskExecutors exited with code 0")
		}},
		{"logs APP --file stdout", time.Minute, func(r e2e.Result) error {
			if err := qsWantSucceeded(r); err != nil {
				return err
			}
			uuids := map[string]bool{}
			n := 0
			for _, s := range e2e.QSLogSections(r.Stdout) {
				for _, l := range s.Lines {
					m := qsGPUsLine.FindStringSubmatch(l)
					if m == nil {
						return fmt.Errorf("%s: %q is not gpus.py's line", s.Container, l)
					}
					if m[2] != m[5] || !strings.HasPrefix(s.Node, m[1]+":") {
						return fmt.Errorf("%s on %s: the file's GPUs and CUDA_VISIBLE_DEVICES, or the node, disagree: %q", s.Container, s.Node, l)
					}
					uuids[m[3]], uuids[m[4]] = true, true
					n++
				}
			}
			if n != 2 || len(uuids) != 4 {
				return fmt.Errorf("%d lines of gpus.py with %d distinct GPUs, want 2 lines and 4 GPUs", n, len(uuids))
			}
			return nil
		}},
		{"submit testdata/quickstart/torchrun.toml", 8 * time.Minute, func(r e2e.Result) error {
			return qsWantSucceeded(r, "gang-formed: gang round 0 formed: 2 TaskExecutors", "rendezvous: gang round 0: all 2 ranks reported; their launchers read rank 0's address over HTTPS", "final status SUCCEEDED")
		}},
		{"logs APP --file stdout", time.Minute, func(r e2e.Result) error {
			if err := qsWantSucceeded(r); err != nil {
				return err
			}
			ranks := map[string]bool{}
			for _, s := range e2e.QSLogSections(r.Stdout) {
				for _, l := range s.Lines {
					m := quickstartDDPLine.FindStringSubmatch(l)
					if m == nil {
						return fmt.Errorf("%s: %q is not an ok line of ddp.py", s.Container, l)
					}
					if m[2] != m[3] {
						return fmt.Errorf("%s: local rank %s sees GPU %s, want its own", s.Container, m[2], m[3])
					}
					ranks[m[1]] = true
				}
			}
			if len(ranks) != 4 {
				return fmt.Errorf("ranks %v printed ok=true, want 0 to 3", ranks)
			}
			return nil
		}},
		{"submit testdata/quickstart/driver.toml --driver ./driver.py", 5 * time.Minute, func(r e2e.Result) error {
			return qsWantSucceeded(r, "finished: application finished: SUCCEEDED: the driver exited with code 0")
		}},
		{"logs APP --am --file am.stdout", time.Minute, func(r e2e.Result) error {
			if err := qsWantSucceeded(r); err != nil {
				return err
			}
			secs := e2e.QSLogSections(r.Stdout)
			if len(secs) != 1 || secs[0].File != "am.stdout" || len(secs[0].Lines) != 2 {
				return fmt.Errorf("want the AM's am.stdout with 2 lines, got %+v", secs)
			}
			for _, l := range secs[0].Lines {
				if !qsDriverLine.MatchString(l) {
					return fmt.Errorf("%q is not the driver's line", l)
				}
			}
			return nil
		}},
	}
}

// qsTorchrunJob returns the path to submit for testdata/quickstart/torchrun.toml: the file itself when
// its python is the cached environment's, else a copy in a temporary tree whose command names
// YARN_AM_TORCH_PYTHON's environment (the page says to change the path for another home).
func qsTorchrunJob(t *testing.T) string {
	t.Helper()
	py := os.Getenv("YARN_AM_TORCH_PYTHON")
	require.NotEmpty(t, py, "YARN_AM_TORCH_PYTHON is not set: run 'make torch-env' and set it to that environment's bin/python (make integration does both)")
	const rel = "testdata/quickstart/torchrun.toml"
	const written = "/root/.cache/yarn-am/torch-venv-2.15.0/bin/python"
	data, err := os.ReadFile(filepath.Join(e2e.QuickstartRoot, rel))
	require.NoError(t, err)
	require.Contains(t, string(data), written+" -m torch.distributed.run", "the job names the cached environment's python")
	if py == written {
		return rel
	}
	root := t.TempDir()
	for src, mode := range map[string]os.FileMode{"testdata/torch/ddp.py": 0o644, "testdata/fake-nvidia-smi/nvidia-smi": 0o755} {
		b, err := os.ReadFile(filepath.Join(e2e.QuickstartRoot, src))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(src)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, src), b, mode))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "testdata/quickstart"), 0o755))
	job := filepath.Join(root, rel)
	require.NoError(t, os.WriteFile(job, []byte(strings.ReplaceAll(string(data), written, py)), 0o644))
	return job
}

// TestQuickstartAsWritten runs every bin/yarn-am command of docs/quickstart-ml.md in order; an
// application id in a command stands for the application of the submit above it.
func TestQuickstartAsWritten(t *testing.T) {
	e2e.Env(t)
	steps := quickstartSteps()
	var want []string
	for _, s := range steps {
		want = append(want, s.cmd)
	}
	require.Equal(t, want, e2e.QSPageCommands(t, e2e.QSReadPage(t, "docs/quickstart-ml.md")),
		"the page's commands and the ones this test runs and checks")

	app := ""
	for _, s := range steps {
		args := strings.Fields(strings.ReplaceAll(s.cmd, "APP", app))
		if args[0] == "submit" && args[1] == "testdata/quickstart/torchrun.toml" {
			args[1] = qsTorchrunJob(t)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			r := e2e.QSRun(t, s.timeout, args)
			t.Logf("yarn-am %s: exit %d after %s", strings.Join(args, " "), r.Code, r.Took.Round(time.Millisecond))
			if args[0] == "submit" {
				id := e2e.SubmittedID(r.Stdout)
				require.NotEmpty(t, id, "yarn-am %s printed no application id:\n%s", s.cmd, r)
				t.Cleanup(func() { e2e.KillQuietly(id) })
				app = id
			}
			err := s.check(r)
			if err == nil {
				break
			}
			if args[0] != "logs" || time.Now().After(deadline) {
				t.Fatalf("yarn-am %s: %v\n%s", strings.Join(args, " "), err, r)
			}
			time.Sleep(2 * time.Second)
		}
	}
}

// TestReadmeMinimalJobRunsOnTheMiniCluster: the README's minimal job is testdata/quickstart/train.toml
// and runs as the README says: two TaskExecutors, one GPU each, distinct where they share a node.
func TestReadmeMinimalJobRunsOnTheMiniCluster(t *testing.T) {
	e2e.Env(t)
	readme := e2e.QSReadPage(t, "README.md")
	section := readme[strings.Index(readme, "## A minimal job file"):]
	section = section[:strings.Index(section, "\n## ")]
	require.Contains(t, section, "`bin/yarn-am submit testdata/quickstart/train.toml`")
	var job string
	for _, b := range e2e.QSBlocks(t, section) {
		if b.Info == "toml" {
			job = b.Body
			break
		}
	}
	assert.Equal(t, e2e.QSReadPage(t, "testdata/quickstart/train.toml"), job, "the README's minimal job is testdata/quickstart/train.toml")

	r := e2e.QSRun(t, 5*time.Minute, []string{"submit", "testdata/quickstart/train.toml"})
	id := e2e.SubmittedID(r.Stdout)
	require.NotEmpty(t, id, "submit printed no application id:\n%s", r)
	t.Cleanup(func() { e2e.KillQuietly(id) })
	require.Equal(t, 0, r.Code, "submit of the README's job:\n%s", r)

	trainLine := regexp.MustCompile(`^train: CUDA_VISIBLE_DEVICES=([0-3])$`)
	deadline := time.Now().Add(time.Minute)
	for {
		r = e2e.QSRun(t, time.Minute, []string{"logs", id, "--file", "stdout"})
		gpuOf := map[string]string{} // node/GPU → container
		var problems []string
		for _, s := range e2e.QSLogSections(r.Stdout) {
			for _, l := range s.Lines {
				m := trainLine.FindStringSubmatch(l)
				if m == nil {
					problems = append(problems, fmt.Sprintf("%s: %q is not train.sh's line", s.Container, l))
					continue
				}
				if other, ok := gpuOf[s.Node+"/"+m[1]]; ok {
					problems = append(problems, fmt.Sprintf("%s and %s share GPU %s on %s", s.Container, other, m[1], s.Node))
				}
				gpuOf[s.Node+"/"+m[1]] = s.Container
			}
		}
		if r.Code == 0 && len(problems) == 0 && len(gpuOf) == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs of the README's job: %v (%d GPUs seen, want 2)\n%s", problems, len(gpuOf), r)
		}
		time.Sleep(2 * time.Second)
	}
}
