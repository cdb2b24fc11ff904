// Package itest is the one harness of the integration tests (build tag integration, and the secure,
// faults and other suites of make test): it checks that the environment of a mini cluster is there
// and builds what the tests run, once per test binary. With the integration tags a missing cluster
// or binary is a failure that says what to run, never a skip (docs/development.md#test-suites-and-make-targets).
package itest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/yarn-am/yarn-am/contract"
)

// Root is the module's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// RequireEnv fails the test unless every variable in names is set, naming the first missing one and
// how make sets it.
func RequireEnv(t testing.TB, names ...string) {
	t.Helper()
	for _, k := range names {
		if os.Getenv(k) == "" {
			t.Fatalf("%s is not set: start the mini cluster with 'make minicluster-up' and source .minicluster/env (make integration and make test do both; the secure suite uses make test-secure)", k)
		}
	}
}

var (
	builds   sync.Map // package path → *built
	buildDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "yarn-am-itest-") })
)

type built struct {
	once sync.Once
	path string
	err  error
}

// build compiles the main package at pkg (relative to the module root) once per test binary,
// statically (the containers run it), and returns the binary's path.
func build(t testing.TB, pkg, name string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &built{})
	b := v.(*built)
	b.once.Do(func() {
		dir, err := buildDir()
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.path, "./"+pkg)
		cmd.Dir = Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./%s: %v\n%s", pkg, err, strings.TrimSpace(string(out)))
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Binary is the yarn-am binary the tests run: YARN_AM_BIN (make integration sets it to bin/yarn-am,
// which must exist), else one built from this tree.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("YARN_AM_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("YARN_AM_BIN=%s: %v (make build writes bin/yarn-am)", bin, err)
		}
		return bin
	}
	return build(t, "cmd/yarn-am", contract.StagedBinary)
}

// Worker is the example worker (testdata/worker), built once, statically, for the containers.
func Worker(t testing.TB) string {
	t.Helper()
	return build(t, "testdata/worker", "worker")
}

// FakeSMI is the fake nvidia-smi the test jobs ship to the containers.
func FakeSMI() string {
	return filepath.Join(Root(), "testdata", "fake-nvidia-smi", "nvidia-smi")
}
