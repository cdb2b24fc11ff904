//go:build docker

// Package docker holds the test of the dockerized mini cluster (docker/README.md): make test-docker
// runs it with the build tag docker. It needs a Docker engine or a machine where engine.sh can start
// one; without it the test fails.
package docker

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The RM port the image pins (entrypoint.sh): nothing may listen there once the demo is over.
const rmAddress = "127.0.0.1:28032"

// gpuLine is one line of the demo's "GPU lines" section: NodeManager, container, and what the
// worker printed (testdata/worker).
var gpuLine = regexp.MustCompile(`^(nm-\d+) (container_\S+): worker: gpu indexes from file=(\S*) env=(\S*) CUDA_VISIBLE_DEVICES=(\S*)$`)

// TestDockerDemo runs make docker-demo's script as it is (demo.sh: engine, images, mini cluster
// container, submit of testdata/jobs/gpu-demo.toml from the yarn-am image) and checks what it shows:
// the job SUCCEEDED, every TaskExecutor printed as many distinct GPU indexes as the job asks for, the
// same by all three ways a worker reads them. It also checks that the demo left nothing running: no
// engine it started, nothing on the RM port. (Its workers exit at once, so two that land on one node
// one after the other may rightly get the same GPUs: TestDockerDemoKerberos checks coordination.)
func TestDockerDemo(t *testing.T) {
	runDemo(t, nil)
}

// TestDockerDemoKerberos runs the demo on the Kerberized cluster (the image's --secure option,
// hadoop.rpc.protection=privacy) with one NodeManager and docker/testdata/gpu-colocated.toml: the
// client in the yarn-am image logs in from the test keytab the container exported (next to krb5.conf
// and the conf that asks for Kerberos and privacy), both workers hold their GPUs on the one node at
// the same time, found by the image's own fake nvidia-smi, and must not share one (coordination mode).
func TestDockerDemoKerberos(t *testing.T) {
	export, byNode := runDemo(t, []string{"DOCKER_DEMO_SECURE=1", "DOCKER_DEMO_RPC_PROTECTION=privacy",
		"DOCKER_MINICLUSTER_ARGS=--nm-hosts 127.0.0.2", "DOCKER_DEMO_JOB=docker/testdata/gpu-colocated.toml"})
	if len(byNode) != 1 {
		t.Errorf("workers ran on NodeManagers %v; the cluster has one", byNode)
	}
	for node, idx := range byNode {
		sort.Ints(idx)
		for i := 1; i < len(idx); i++ {
			if idx[i] == idx[i-1] {
				t.Errorf("workers on %s share GPU %d (all indexes there: %v)", node, idx[i], idx)
			}
		}
	}
	core, err := os.ReadFile(filepath.Join(export, "conf/core-site.xml"))
	if err != nil {
		t.Fatalf("the Kerberized cluster's conf was not exported: %v", err)
	}
	for _, kv := range [][2]string{{"hadoop.security.authentication", "kerberos"}, {"hadoop.rpc.protection", "privacy"}} {
		re := regexp.MustCompile(`<name>` + regexp.QuoteMeta(kv[0]) + `</name>\s*<value>([^<]*)</value>`)
		if m := re.FindSubmatch(core); m == nil || string(m[1]) != kv[1] {
			t.Errorf("exported core-site.xml: %s = %q, want %q", kv[0], m, kv[1])
		}
	}
	keytab, err := os.Stat(filepath.Join(export, "kerberos/yarnam.keytab"))
	if err != nil {
		t.Fatalf("the test user's keytab was not exported: %v", err)
	}
	if keytab.Mode().Perm() != 0o600 {
		t.Errorf("exported keytab has mode %v, want 0600", keytab.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(export, "kerberos/krb5.conf")); err != nil {
		t.Errorf("krb5.conf was not exported: %v", err)
	}
}

// runDemo runs docker/demo.sh with the extra environment, asserts what both tests share, and returns
// the demo's export dir (conf/, work/, kerberos/ stay there after the demo) and the GPU indexes the
// workers printed, by NodeManager.
func runDemo(t *testing.T, extraEnv []string) (string, map[string][]int) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"bin/yarn-am", "bin/worker"} {
		if _, err := os.Stat(filepath.Join(root, b)); err != nil {
			t.Fatalf("%s is missing: run make test-docker (it builds it): %v", b, err)
		}
	}
	job := "testdata/jobs/gpu-demo.toml"
	for _, kv := range extraEnv {
		if v, ok := strings.CutPrefix(kv, "DOCKER_DEMO_JOB="); ok {
			job = v
		}
	}
	instances, perWorker := demoJobShape(t, filepath.Join(root, job))
	engineBefore := engineAnswers(t, root)
	export := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "docker/demo.sh")
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "DOCKER_DEMO_DIR="+export), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("docker/demo.sh %v took %s; its output:\n%s", extraEnv, time.Since(start).Round(time.Second), out.String())
	if runErr != nil {
		t.Fatalf("docker/demo.sh: %v (output above)", runErr)
	}

	if !regexp.MustCompile(`(?m): final status SUCCEEDED$`).Match(out.Bytes()) {
		t.Errorf("the demo job did not end with 'final status SUCCEEDED'")
	}

	byNode := map[string][]int{}
	workers := 0
	for _, line := range strings.Split(out.String(), "\n") {
		m := gpuLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		workers++
		node, container, file, env, cuda := m[1], m[2], m[3], m[4], m[5]
		if file != env || file != cuda {
			t.Errorf("%s on %s: the three ways disagree: file=%q env=%q CUDA_VISIBLE_DEVICES=%q", container, node, file, env, cuda)
		}
		idx := indexes(t, container, file)
		if len(idx) != perWorker {
			t.Errorf("%s on %s got GPUs %v, want %d (external-resource.gpu.amount)", container, node, idx, perWorker)
		}
		byNode[node] = append(byNode[node], idx...)
	}
	if workers != instances {
		t.Errorf("%d workers printed GPU lines, want %d (taskexecutor.instances)", workers, instances)
	}

	if !engineBefore && engineAnswers(t, root) {
		t.Errorf("the demo started a Docker engine and left it running")
	}
	if c, err := net.DialTimeout("tcp", rmAddress, 2*time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on the mini cluster's RM port %s after the demo", rmAddress)
	}
	return export, byNode
}

// demoJobShape reads taskexecutor.instances and external-resource.gpu.amount from the job file.
func demoJobShape(t *testing.T, path string) (instances, gpus int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	get := func(re string) int {
		m := regexp.MustCompile(`(?m)^` + re + `\s*=\s*(\d+)`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no %s", path, re)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n
	}
	return get(`instances`), get(`"external-resource\.gpu\.amount"`)
}

// indexes parses "0,1" into distinct GPU indexes (0..3: the fake nvidia-smi's 4 GPUs).
func indexes(t *testing.T, container, list string) []int {
	t.Helper()
	var out []int
	seen := map[int]bool{}
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 3 {
			t.Errorf("%s: GPU index %q is not one of the node's 0..3", container, s)
			continue
		}
		if seen[n] {
			t.Errorf("%s: GPU %d given twice (%s)", container, n, list)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// engineAnswers tells whether engine.sh finds an engine that answers (exit 1: none does).
func engineAnswers(t *testing.T, root string) bool {
	t.Helper()
	cmd := exec.Command("bash", "docker/engine.sh", "env")
	cmd.Dir = root
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return false
	}
	if err != nil {
		t.Fatalf("docker/engine.sh env: %v", err)
	}
	return true
}
