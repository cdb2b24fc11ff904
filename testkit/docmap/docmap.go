// Package docmap checks a package's doc.go map of its files (am/doc.go, framework/flink/doc.go): it
// names every non-test Go file of the package, and nothing that is not one, so a new file cannot
// join without saying what it holds.
package docmap

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fileName is a Go file's name as a doc.go map names it.
var fileName = regexp.MustCompile(`\b([a-z0-9_]+\.go)\b`)

// Check fails t for each non-test Go file of dir that dir's doc.go does not name, and for each
// name in doc.go that is not a file of dir.
func Check(t *testing.T, dir string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(dir, "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range fileName.FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f = filepath.Base(f)
		if !strings.HasSuffix(f, "_test.go") && f != "doc.go" && !named[f] {
			t.Errorf("doc.go's file list does not name %s: add a line saying what it holds", f)
		}
	}
	for f := range named {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("doc.go names %s, which is not a file of the package", f)
		}
	}
}
