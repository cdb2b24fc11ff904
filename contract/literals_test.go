package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// wordValues are contract constants whose values are also ordinary words with other meanings
// elsewhere, so a literal equal to one is not a copy of the contract. Each has its reason.
var wordValues = map[string]string{
	"SeverityError":        `"error" is also a JSON key of error bodies and a log field`,
	"SeverityInfo":         `"info" is also a log level and a configuration-warning level (resources)`,
	"SeverityWarning":      `"warning" is also a configuration-warning level (resources)`,
	"DefaultLogLevel":      `"info" is also an event severity and a configuration-warning level`,
	"EventCompleted":       `"completed" is also the metric label of the COMPLETED phase (am/metrics.go)`,
	"EventRendezvous":      `"rendezvous" is also the example worker's flag name`,
	"EventPlacement":       `"placement" is also the key of the job file's [taskexecutor.placement] table (jobfile)`,
	"TypeFile":             `"FILE" is also the Kerberos ticket-cache type (KRB5CCNAME=FILE:...)`,
	"Failed":               `"FAILED" is also a Flink job's state in its REST API (framework/flink/flinkdist)`,
	"Completed":            `"COMPLETED" is also the status of a Flink savepoint operation in its REST API (framework/flink/flinkdist)`,
	"PreemptionSignalNone": `"none" is also the reserved value of external-resources and a log codec's name (container/logs)`,
	"StateRunning":         `"RUNNING" is also a Flink job's state in its REST API (framework/flink)`,
	"Running":              `"RUNNING" is also a Flink job's state in its REST API (framework/flink)`,
	"DeviceEnvOff":         `"off" is also a value of [flink] checkpoint-on-preemption (framework/flink)`,
	"GPUSampleOff":         `"off" is also a value of [flink] checkpoint-on-preemption (framework/flink)`,
	"StagedResourceConf":   `"flink-conf.yaml" is also the legacy configuration file of a Flink home (framework/flink/flinkdist)`,
	"EventIdleGPURelease":  `"idle-gpu-release" is also the job-file key taskexecutor.idle-gpu-release (jobfile), which the event is named after`,
	"NoticeIdleGPURelease": `"idle-gpu-release" is also the job-file key taskexecutor.idle-gpu-release (jobfile), which the notice's reason is named after`,
}

// skippedDirs are left out of the scan, each with its reason.
var skippedDirs = map[string]string{
	"contract":         "the definitions themselves",
	"yarnrpc/hadooppb": "generated from the .proto files",
	"testkit/e2e": "the end-to-end tests' helpers (build tag integration), test code like the _test.go files " +
		"they serve: the AM-level submit spells the staging contract out, so a changed constant fails a test " +
		"rather than moving both sides, and an application's end is YARN's own FINISHED, FAILED or KILLED",
	"testdata/bench": "a black-box harness that imports only the standard library, drives yarn-am and " +
		"DistributedShell alike and reads YARN's own final states (SUCCEEDED, FAILED, KILLED) from their output",
}

// TestContractValuesAreNotSpelledOut fails when a non-test Go file outside contract spells
// out one of the contract's exported string constants instead of naming it: each name exists once,
// here (docs/design.md#contracts), and a copy can drift.
func TestContractValuesAreNotSpelledOut(t *testing.T) {
	consts := contractStrings(t)
	root := moduleRoot(t)
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, skip := skippedDirs[rel]; skip || rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		hits, err := spelledOut(rel, src, consts)
		found = append(found, hits...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: use the constant (or add it to wordValues with a reason)", f)
	}
}

// The scan finds a copied value, and only where it is a string literal.
func TestSpelledOutFindsCopies(t *testing.T) {
	consts := contractStrings(t)
	src := []byte(`package x

import "os"

var _ = os.Getenv("YARN_AM_LOG_LEVEL")
var _ = "YARN_AM_LOG_LEVEL is the log level" // in a sentence: not a copy
var _ = map[string]string{"error": "x"}      // a word value
`)
	hits, err := spelledOut("x/x.go", src, consts)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || !strings.Contains(hits[0], "x/x.go:5:") || !strings.Contains(hits[0], "contract.EnvLogLevel") {
		t.Fatalf("hits = %q, want one for contract.EnvLogLevel on line 5", hits)
	}
}

// spelledOut lists the string literals of one file equal to a contract constant's value.
func spelledOut(rel string, src []byte, consts map[string][]string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	imports := map[*ast.BasicLit]bool{}
	for _, im := range f.Imports {
		imports[im.Path] = true
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || imports[lit] {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, name := range consts[s] {
			if _, word := wordValues[name]; !word {
				found = append(found, fset.Position(lit.Pos()).String()+": "+strconv.Quote(s)+" is contract."+name)
			}
		}
		return true
	})
	return found, nil
}

// contractStrings maps the value of every exported string constant of this package to its names.
func contractStrings(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string][]string{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !name.IsExported() || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[s] = append(out[s], name.Name)
				}
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d contract strings: the scan of this package is broken", len(out))
	}
	return out
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}
