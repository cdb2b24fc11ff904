package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionNamesTheStampedRevision builds yarn-am the way the Makefile does (-X main.revision=…,
// with the toolchain's VCS stamping off, as GOFLAGS=-buildvcs=false sets it on some machines) and
// checks that `yarn-am version` prints that revision: a renamed variable would make -X a silent no-op.
func TestVersionNamesTheStampedRevision(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^LDFLAGS :=.*-X main\.revision=\$\(REVISION\)`).Match(mk) {
		t.Fatalf("the Makefile's LDFLAGS no longer stamp main.revision")
	}
	bin := filepath.Join(t.TempDir(), "yarn-am")
	const rev = "0123456789abcdef0123456789abcdef01234567"
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.revision="+rev, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("yarn-am version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "(revision "+rev+",") {
		t.Fatalf("yarn-am version = %q, want the stamped revision %s", out, rev)
	}
}
