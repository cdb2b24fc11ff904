package startfail

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// start starts a file as a program, as the launcher and discovery do, and returns Explain's answer.
func start(t *testing.T, content string, mode os.FileMode) (string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	err := exec.Command(p).Run()
	if err == nil {
		t.Fatalf("%q started", content)
	}
	return p, Explain(p, err)
}

// TestExplainSaysWhichPartIsMissing: with real files, the start failures whose kernel error misleads
// ("no such file or directory" for a script that is there) say what is wrong with the script.
func TestExplainSaysWhichPartIsMissing(t *testing.T) {
	for _, c := range []struct {
		name, content string
		mode          os.FileMode
		want          []string
	}{
		{"missing interpreter", "#!/usr/bin/pythonX\nprint(1)\n", 0o755,
			[]string{"its #! line names /usr/bin/pythonX, which does not exist on this node"}},
		{"missing interpreter with an argument", "#! /opt/nope/bin/perl -w\n", 0o755,
			[]string{"names /opt/nope/bin/perl, which does not exist"}},
		{"Windows line ends", "#!/bin/sh\r\necho hi\r\n", 0o755,
			[]string{"carriage return (\\r)", "Windows line ends", `"/bin/sh\r"`}},
		{"no #! line", "echo hi\n", 0o755,
			[]string{"has no #! line", "#!/bin/sh"}},
		{"not executable", "#!/bin/sh\necho hi\n", 0o644,
			[]string{"is not executable", "-rw-r--r--", "chmod +x"}},
	} {
		p, err := start(t, c.content, c.mode)
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%s: %v is not explained", c.name, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: %q does not start with the script's path", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
	}
	// Still the start's error underneath.
	_, err := start(t, "#!/usr/bin/pythonX\n", 0o755)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v does not unwrap to fs.ErrNotExist", err)
	}
}

// TestExplainLeavesTheRestAlone: a missing program, a directory, and a working interpreter that fails
// are not explained: the kernel's or the program's words are right.
func TestExplainLeavesTheRestAlone(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	err := exec.Command(missing).Run()
	if got := Explain(missing, err); got != err {
		t.Errorf("a missing program: %v", got)
	}
	dir := t.TempDir()
	err = exec.Command(dir).Run()
	if got := Explain(dir, err); got != err {
		t.Errorf("a directory: %v", got)
	}
	p, err := start(t, "#!/bin/sh\nexit 3\n", 0o755)
	var se *Error
	if errors.As(err, &se) {
		t.Errorf("%s exiting 3 explained as %v", p, err)
	}
}

// TestExplainIsBounded: a #! line of 100 KB with escape sequences gives a short message with no raw
// control byte.
func TestExplainIsBounded(t *testing.T) {
	_, err := start(t, "#!/nope/\x1b[2J\x07"+strings.Repeat("x", 100<<10)+"\n", 0o755)
	msg := err.Error()
	if len(msg) > 1024 || strings.ContainsAny(msg, "\x1b\x07") {
		t.Errorf("message of %d bytes: %q", len(msg), msg[:min(len(msg), 300)])
	}
}
