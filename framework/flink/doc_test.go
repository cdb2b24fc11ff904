package flink

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocNamesEveryFile: the package comment's file list (doc.go, "Files") names every non-test Go
// file of the package, and no file that is not there, so a new file cannot join without saying what
// it holds.
func TestDocNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-z0-9_]+\.go)\b`).FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") && f != "doc.go" && !named[f] {
			t.Errorf("doc.go's file list does not name %s: add a line saying what it holds", f)
		}
	}
	for f := range named {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("doc.go names %s, which is not a file of the package", f)
		}
	}
}
