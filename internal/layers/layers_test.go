package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// floors places every package of the module, lowest first; a pattern ending in "/..." also covers the
// packages below it, and the most specific pattern wins (a longer one; an exact one over "/..." of the
// same folder). A package may import only packages on a lower floor, or on its own floor where
// sameFloor names the pair. Moving a package is one line here.
var floors = []struct {
	pattern string
	floor   int
}{
	// 0: leaves under internal/ that need nothing of the module: Hadoop's own names, message text,
	// the commands' flag types, /proc, bounded reads, free ports, the Flink configuration reader, the
	// Java class-file reader, replacing a file in one step.
	{"internal/...", 0},
	// 1: the wire: the Hadoop RPC client, its protocol buffers and its fake server.
	{"yarnrpc/...", 1},
	// 2: the contracts the processes share, and the clients that need only them.
	{"contract", 2},
	{"contract/amtls/...", 2},
	{"contract/launchctx", 2},
	{"am/driverclient", 2},
	// 3: the external-resource framework.
	{"resources", 3},
	// 4: the GPU driver.
	{"gpu/...", 4},
	// 5: the job file.
	{"jobfile", 5},
	// 6: the framework seam.
	{"framework", 6},
	// 7: the frameworks behind the seam.
	{"framework/flink/flinkdist", 7},
	{"framework/...", 7},
	// 8: the three roles: the client (and logs, a client command), the launcher, the AM.
	{"container", 8}, // the folder's doc
	{"container/client", 8},
	{"container/launcher", 8},
	{"container/logs", 8},
	{"am/...", 8},
	// 9: the binary and the harnesses that drive it.
	{"cmd/...", 9},
	{"testdata/...", 9},
	// 10: test support: a fake cluster, the integration tests' harness and the end-to-end helpers
	// am's and Flink's tests share (build tag integration), the doc.go file-map check and headless
	// Chromium driven over the DevTools protocol; only tests import it.
	{"testkit/chromium", testkit},
	{"testkit/docmap", testkit},
	{"testkit/e2e", testkit},
	{"testkit/fakecluster", testkit},
	{"testkit/itest", testkit},
}

// testkit is the floor of test support, above everything, so no non-test import may reach it.
const testkit = 10

// sameFloor lists the imports allowed between two packages of one floor, importer → imported.
var sameFloor = map[string][]string{
	"internal/cli":             {"internal/text"},
	"internal/flinkconf":       {"internal/boundedread", "internal/text"},
	"yarnrpc":                  {"yarnrpc/hadooppb"},
	"yarnrpc/rpctest":          {"yarnrpc", "yarnrpc/hadooppb"},
	"contract/amtls/amtlstest": {"contract/amtls"},
	"contract/launchctx":       {"contract"},
	"am/driverclient":          {"contract", "contract/amtls"},
	"framework/builtin":        {"framework/flink", "framework/gang"},
	"framework/flink":          {"framework/flink/flinkdist"},
	"container/logs":           {"container/client"},
	"am":                       {"am/book", "am/decision", "am/events", "am/gpuuse", "am/web"},
	"am/book":                  {"am/decision", "am/events"},
	"am/events":                {"am/decision"},
	"testkit/e2e":              {"testkit/chromium", "testkit/itest"},
	"testkit/fakecluster":      {"testkit/itest"},
}

// knownExceptions are imports the floors forbid that the code still has, importer → imported, each
// with why it is tolerated for now. Empty is the goal; an entry that no longer happens fails the test,
// so the list only shrinks.
var knownExceptions = map[[2]string]string{
	// Tests only: each drives the real thing above it rather than a copy of it.
	{"am/driverclient", "am"}:               "test: the client is tested against the AM's own HTTP API, so a change of either side fails it",
	{"am/driverclient", "am/web"}:           "test: the same, through the API's handlers",
	{"am/driverclient", "am/events"}:        "test: the same, with the AM's own events in the log it serves",
	{"am/driverclient", "am/decision"}:      "test: the same, the outcome a finished event carries",
	{"framework/flink", "container/client"}: "test: ship_test stages a Flink job through the client's staging, the path submit takes",
	{"resources", "gpu"}:                    "test: examples_test (package resources_test) registers the gpu driver to show a configuration with GPUs",
}

// TestFloors checks every import between the module's packages, test files' imports included, against
// the floors.
func TestFloors(t *testing.T) {
	mod, pkgs := listModule(t)
	floorOf := func(pkg string) (int, bool) {
		f := floorFor(pkg)
		return f, f >= 0
	}
	used := map[[2]string]bool{}
	for _, p := range pkgs {
		from := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		if p.Module == nil || p.Module.Path != mod {
			continue
		}
		ff, ok := floorOf(from)
		if !ok {
			t.Errorf("%s is on no floor: add it to the floors table (internal/layers/layers_test.go)", from)
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if imp != mod && !strings.HasPrefix(imp, mod+"/") {
					continue
				}
				to := strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
				if to == from || strings.HasSuffix(imp, "_test") {
					continue
				}
				tf, ok := floorOf(to)
				if !ok {
					continue // reported as a package of its own
				}
				if test && (tf == testkit || tf <= ff) {
					continue // a test may use test support and its own floor
				}
				if tf < ff || tf == ff && contains(sameFloor[from], to) {
					continue
				}
				if why, known := knownExceptions[[2]string{from, to}]; known && (test || !strings.HasPrefix(why, "test:")) {
					used[[2]string{from, to}] = true
					continue
				}
				kind := "imports"
				if test {
					kind = "imports in its tests"
				}
				t.Errorf("%s (floor %d) %s %s (floor %d): a floor may only import below itself (internal/layers/layers_test.go)", from, ff, kind, to, tf)
			}
		}
		check(p.Imports, false)
		check(append(p.TestImports, p.XTestImports...), true)
	}
	for k, why := range knownExceptions {
		if !used[k] {
			t.Errorf("knownExceptions lists %s → %s (%s), which no package imports any more: remove it", k[0], k[1], why)
		}
	}
}

// registryImporters may import a framework's package (framework/<name>), besides the framework's own
// packages: the registry, and the benchmark, which packs a Flink home exactly as submit does to compare
// like with like (testdata/bench/README.md).
var registryImporters = map[string]string{
	"framework/builtin": "the registry: importing it registers every framework compiled in",
	"testdata/bench":    "the benchmark packs the Flink home with the framework's own HomeArchive",
}

// TestOnlyTheRegistryImportsAFramework: a framework is reached through the seam (package framework)
// and nothing else (docs/design.md#adding-a-framework): no package but the registry imports
// framework/<name>; tests may, to test it.
func TestOnlyTheRegistryImportsAFramework(t *testing.T) {
	mod, pkgs := listModule(t)
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Path != mod {
			continue
		}
		from := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		for _, imp := range p.Imports {
			to := strings.TrimPrefix(imp, mod+"/")
			rest, ok := strings.CutPrefix(to, "framework/")
			if !ok || to == imp || rest == "builtin" {
				continue
			}
			name, _, _ := strings.Cut(rest, "/")
			if from == "framework/"+name || strings.HasPrefix(from, "framework/"+name+"/") {
				continue // the framework's own packages
			}
			if _, ok := registryImporters[from]; ok {
				continue
			}
			t.Errorf("%s imports %s: only framework/builtin imports a framework's package; call it through package framework (docs/design.md#adding-a-framework)", from, to)
		}
	}
}

// TestFloorsTableIsTidy: each pattern once, and every same-floor pair really on one floor.
func TestFloorsTableIsTidy(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range floors {
		if seen[f.pattern] {
			t.Errorf("%s is in the floors table twice", f.pattern)
		}
		seen[f.pattern] = true
	}
	for from, tos := range sameFloor {
		for _, to := range tos {
			if a, b := floorFor(from), floorFor(to); a != b {
				t.Errorf("sameFloor: %s (floor %d) → %s (floor %d) are on different floors", from, a, to, b)
			}
		}
	}
}

// floorFor is pkg's floor, or -1 when no pattern matches it.
func floorFor(pkg string) int {
	best, floor := -1, -1
	for _, f := range floors {
		if !matches(f.pattern, pkg) {
			continue
		}
		score := 2*len(f.pattern) + 1 // exact
		if dir, ok := strings.CutSuffix(f.pattern, "/..."); ok {
			score = 2 * len(dir)
		}
		if score > best {
			best, floor = score, f.floor
		}
	}
	return floor
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"internal/...", "internal/text", true},
		{"internal/...", "internal", true},
		{"internal/...", "internals/x", false},
		{"framework", "framework", true},
		{"framework", "framework/flink", false},
	} {
		if got := matches(c.pattern, c.pkg); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.pattern, c.pkg, got)
		}
	}
}

func matches(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type listedPackage struct {
	ImportPath   string
	Module       *struct{ Path string }
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listModule runs `go list -json ./...` at the module's root (with the integration tests' build tag, so
// their imports are checked too) and returns the module path and its packages.
func listModule(t *testing.T) (string, []listedPackage) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the packages with")
	}
	gomod, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.Command(goBin, "list", "-e", "-tags", "integration", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	mod := ""
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Module != nil && mod == "" {
			mod = p.Module.Path
		}
		pkgs = append(pkgs, p)
	}
	if mod == "" {
		t.Fatalf("go list in %s found no package of a module", root)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].ImportPath < pkgs[j].ImportPath })
	return mod, pkgs
}
