//go:build integration

package am_test

// docs/quickstart-ml.md and the README's minimal job, run as written on the mini cluster: the files
// the pages show are byte for byte the ones under testdata/quickstart that the tests submit, and every
// `bin/yarn-am` command of the quick start runs, in the page's order, from the repository root
// through the real binary (YARN_AM_BIN), its output checked against what the page says it shows.
// The torchrun step uses the cached torch environment (YARN_AM_TORCH_PYTHON, as
// am/torch_integration_test.go does).

import (
	"bufio"
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
)

// The quick start's paths are relative to the repository root; the tests run in am/.
const quickstartRoot = ".."

// qsDocFileCaption is the line that names the file a fenced block shows:
// [`testdata/quickstart/gpus.py`](../testdata/quickstart/gpus.py):
var qsDocFileCaption = regexp.MustCompile("^\\[`(testdata/quickstart/[^`]+)`\\]\\(\\.\\./testdata/quickstart/[^)]+\\):$")

// qsBlocks returns the page's fenced blocks in order: the info string, the body and the
// caption, the last non-blank line between the previous block and the opening fence.
type qsBlock struct{ info, body, caption string }

func qsBlocks(t *testing.T, page string) []qsBlock {
	t.Helper()
	var blocks []qsBlock
	var cur *qsBlock
	var body strings.Builder
	last := ""
	sc := bufio.NewScanner(strings.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &qsBlock{info: strings.TrimPrefix(line, "```"), caption: last}
			body.Reset()
		case cur != nil && line == "```":
			cur.body = body.String()
			blocks = append(blocks, *cur)
			cur, last = nil, ""
		case cur != nil:
			body.WriteString(line + "\n")
		case strings.TrimSpace(line) != "":
			last = line
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "an unclosed fence")
	return blocks
}

func qsReadPage(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(quickstartRoot, rel))
	require.NoError(t, err)
	return string(data)
}

// The files docs/quickstart-ml.md shows are the files the test runs.
func TestQuickstartFilesAreThePagesBlocks(t *testing.T) {
	shown := map[string]bool{}
	for _, b := range qsBlocks(t, qsReadPage(t, "docs/quickstart-ml.md")) {
		m := qsDocFileCaption.FindStringSubmatch(b.caption)
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(quickstartRoot, m[1]))
		require.NoError(t, err, "the page shows %s", m[1])
		assert.Equal(t, string(data), b.body, "%s: the page's block and the file differ", m[1])
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

// qsRun runs the yarn-am binary in the repository root, where the page's paths start.
func qsRun(t *testing.T, timeout time.Duration, args []string) result {
	t.Helper()
	return yarnAMIn(t, quickstartRoot, timeout, args...)
}

// qsLogSection is one file of `yarn-am logs`: "==> CONTAINER on NODE: FILE (N bytes) <==" and its lines.
type qsLogSection struct {
	container, node, file string
	lines                 []string
}

var qsLogHeader = regexp.MustCompile(`^==> (container_\S+) on (\S+): (\S+) \(\d+ bytes\) <==$`)

func qsLogSections(out string) []qsLogSection {
	var secs []qsLogSection
	for _, line := range strings.Split(out, "\n") {
		if m := qsLogHeader.FindStringSubmatch(line); m != nil {
			secs = append(secs, qsLogSection{container: m[1], node: m[2], file: m[3]})
			continue
		}
		if len(secs) > 0 && line != "" {
			secs[len(secs)-1].lines = append(secs[len(secs)-1].lines, line)
		}
	}
	return secs
}

// quickstartStep is one command of the page, with the application id written as APP, and what
// its output must show. logs steps are retried: right after the end the NodeManagers may still be
// uploading (the page says so).
type quickstartStep struct {
	cmd     string
	timeout time.Duration
	check   func(r result) error
}

func qsWantSucceeded(r result, lines ...string) error {
	if r.code != 0 {
		return fmt.Errorf("exit %d, want 0", r.code)
	}
	for _, l := range lines {
		if !strings.Contains(r.stdout, l) {
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
		{"check testdata/quickstart/gpus.toml", time.Minute, func(r result) error {
			return qsWantSucceeded(r, "OK: job quickstart-gpus fits the cluster: 2 TaskExecutor(s) of memory-mb=256, vcores=1, yarn.io/gpu=2")
		}},
		{"submit testdata/quickstart/gpus.toml", 5 * time.Minute, func(r result) error {
			if n := len(qsResInfoLine.FindAllString(r.stdout, -1)); n != 2 {
				return fmt.Errorf("%d resource-info lines with two GPUs, want 2", n)
			}
			return qsWantSucceeded(r, "finished: application finished: SUCCEEDED: all 2 TaskExecutors exited with code 0", "final status SUCCEEDED", "tracking URL http://")
		}},
		{"follow APP", time.Minute, func(r result) error { return qsWantSucceeded(r, ": final status SUCCEEDED") }},
		{"status APP", time.Minute, func(r result) error {
			return qsWantSucceeded(r, "(quickstart-gpus)", "State:        FINISHED, final status SUCCEEDED", "Diagnostics:  all 2 TaskExecutors exited with code 0")
		}},
		{"logs APP --file stdout", time.Minute, func(r result) error {
			if err := qsWantSucceeded(r); err != nil {
				return err
			}
			uuids := map[string]bool{}
			n := 0
			for _, s := range qsLogSections(r.stdout) {
				for _, l := range s.lines {
					m := qsGPUsLine.FindStringSubmatch(l)
					if m == nil {
						return fmt.Errorf("%s: %q is not gpus.py's line", s.container, l)
					}
					if m[2] != m[5] || !strings.HasPrefix(s.node, m[1]+":") {
						return fmt.Errorf("%s on %s: the file's GPUs and CUDA_VISIBLE_DEVICES, or the node, disagree: %q", s.container, s.node, l)
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
		{"submit testdata/quickstart/torchrun.toml", 8 * time.Minute, func(r result) error {
			return qsWantSucceeded(r, "gang-formed: gang round 0 formed: 2 TaskExecutors", "rendezvous: gang round 0: all 2 ranks reported; their launchers read rank 0's address over HTTPS", "final status SUCCEEDED")
		}},
		{"logs APP --file stdout", time.Minute, func(r result) error {
			if err := qsWantSucceeded(r); err != nil {
				return err
			}
			ranks := map[string]bool{}
			for _, s := range qsLogSections(r.stdout) {
				for _, l := range s.lines {
					m := quickstartDDPLine.FindStringSubmatch(l)
					if m == nil {
						return fmt.Errorf("%s: %q is not an ok line of ddp.py", s.container, l)
					}
					if m[2] != m[3] {
						return fmt.Errorf("%s: local rank %s sees GPU %s, want its own", s.container, m[2], m[3])
					}
					ranks[m[1]] = true
				}
			}
			if len(ranks) != 4 {
				return fmt.Errorf("ranks %v printed ok=true, want 0 to 3", ranks)
			}
			return nil
		}},
		{"submit testdata/quickstart/driver.toml --driver ./driver.py", 5 * time.Minute, func(r result) error {
			return qsWantSucceeded(r, "finished: application finished: SUCCEEDED: the driver exited with code 0")
		}},
		{"logs APP --am --file am.stdout", time.Minute, func(r result) error {
			if err := qsWantSucceeded(r); err != nil {
				return err
			}
			secs := qsLogSections(r.stdout)
			if len(secs) != 1 || secs[0].file != "am.stdout" || len(secs[0].lines) != 2 {
				return fmt.Errorf("want the AM's am.stdout with 2 lines, got %+v", secs)
			}
			for _, l := range secs[0].lines {
				if !qsDriverLine.MatchString(l) {
					return fmt.Errorf("%q is not the driver's line", l)
				}
			}
			return nil
		}},
	}
}

// qsPageCommands returns the `bin/yarn-am` lines of the page's sh blocks, application ids as APP.
// Commands for a real cluster are written as `yarn-am ...` and are not run.
func qsPageCommands(t *testing.T, page string) []string {
	t.Helper()
	var cmds []string
	for _, b := range qsBlocks(t, page) {
		if b.info != "sh" {
			continue
		}
		for _, line := range strings.Split(b.body, "\n") {
			if rest, ok := strings.CutPrefix(line, "bin/yarn-am "); ok {
				if i := strings.Index(rest, "  #"); i >= 0 {
					rest = rest[:i]
				}
				cmds = append(cmds, appIDRe.ReplaceAllString(strings.TrimSpace(rest), "APP"))
			}
		}
	}
	return cmds
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
	data, err := os.ReadFile(filepath.Join(quickstartRoot, rel))
	require.NoError(t, err)
	require.Contains(t, string(data), written+" -m torch.distributed.run", "the job names the cached environment's python")
	if py == written {
		return rel
	}
	root := t.TempDir()
	for src, mode := range map[string]os.FileMode{"testdata/torch/ddp.py": 0o644, "testdata/fake-nvidia-smi/nvidia-smi": 0o755} {
		b, err := os.ReadFile(filepath.Join(quickstartRoot, src))
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
	e2eEnv(t)
	steps := quickstartSteps()
	var want []string
	for _, s := range steps {
		want = append(want, s.cmd)
	}
	require.Equal(t, want, qsPageCommands(t, qsReadPage(t, "docs/quickstart-ml.md")),
		"the page's commands and the ones this test runs and checks")

	app := ""
	for _, s := range steps {
		args := strings.Fields(strings.ReplaceAll(s.cmd, "APP", app))
		if args[0] == "submit" && args[1] == "testdata/quickstart/torchrun.toml" {
			args[1] = qsTorchrunJob(t)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			r := qsRun(t, s.timeout, args)
			t.Logf("yarn-am %s: exit %d after %s", strings.Join(args, " "), r.code, r.took.Round(time.Millisecond))
			if args[0] == "submit" {
				id := submittedID(r.stdout)
				require.NotEmpty(t, id, "yarn-am %s printed no application id:\n%s", s.cmd, r)
				t.Cleanup(func() { killQuietly(id) })
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
	e2eEnv(t)
	readme := qsReadPage(t, "README.md")
	section := readme[strings.Index(readme, "## A minimal job file"):]
	section = section[:strings.Index(section, "\n## ")]
	require.Contains(t, section, "`bin/yarn-am submit testdata/quickstart/train.toml`")
	var job string
	for _, b := range qsBlocks(t, section) {
		if b.info == "toml" {
			job = b.body
			break
		}
	}
	assert.Equal(t, qsReadPage(t, "testdata/quickstart/train.toml"), job, "the README's minimal job is testdata/quickstart/train.toml")

	r := qsRun(t, 5*time.Minute, []string{"submit", "testdata/quickstart/train.toml"})
	id := submittedID(r.stdout)
	require.NotEmpty(t, id, "submit printed no application id:\n%s", r)
	t.Cleanup(func() { killQuietly(id) })
	require.Equal(t, 0, r.code, "submit of the README's job:\n%s", r)

	trainLine := regexp.MustCompile(`^train: CUDA_VISIBLE_DEVICES=([0-3])$`)
	deadline := time.Now().Add(time.Minute)
	for {
		r = qsRun(t, time.Minute, []string{"logs", id, "--file", "stdout"})
		gpuOf := map[string]string{} // node/GPU → container
		var problems []string
		for _, s := range qsLogSections(r.stdout) {
			for _, l := range s.lines {
				m := trainLine.FindStringSubmatch(l)
				if m == nil {
					problems = append(problems, fmt.Sprintf("%s: %q is not train.sh's line", s.container, l))
					continue
				}
				if other, ok := gpuOf[s.node+"/"+m[1]]; ok {
					problems = append(problems, fmt.Sprintf("%s and %s share GPU %s on %s", s.container, other, m[1], s.node))
				}
				gpuOf[s.node+"/"+m[1]] = s.container
			}
		}
		if r.code == 0 && len(problems) == 0 && len(gpuOf) == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs of the README's job: %v (%d GPUs seen, want 2)\n%s", problems, len(gpuOf), r)
		}
		time.Sleep(2 * time.Second)
	}
}
