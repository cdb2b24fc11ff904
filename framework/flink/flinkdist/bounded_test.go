package flinkdist

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test when it has not returned in 10s: a named pipe must be refused, not
// opened (an open of a pipe blocks until someone writes).
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still reading after 10s: a named pipe or a device must be refused, not read")
		return nil
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

// TestFlinkHomeFilesAreBounded: a Flink home whose jars or log4j.properties are a named pipe or a
// device is refused naming the file, and the launcher's info file too (docs/running.md#limits-on-input-files).
func TestFlinkHomeFilesAreBounded(t *testing.T) {
	t.Run("a lib jar a named pipe", func(t *testing.T) {
		h := fakeHome(t, "")
		jar := filepath.Join(h.Dir, "lib", "flink-table-1.20.5.jar")
		if err := syscall.Mkfifo(jar, 0o644); err != nil {
			t.Fatal(err)
		}
		wantErr(t, within(t, func() error { _, err := OpenHome(h.Dir); return err }), jar, "named pipe", "not a regular file")
	})
	t.Run("flink-dist a link to /dev/zero", func(t *testing.T) {
		h := fakeHome(t, "")
		os.Remove(h.DistJar)
		if err := os.Symlink("/dev/zero", h.DistJar); err != nil {
			t.Fatal(err)
		}
		wantErr(t, within(t, func() error { _, err := OpenHome(h.Dir); return err }), h.DistJar, "a device")
	})
	for name, mk := range map[string]func(p string) error{
		"log4j.properties a named pipe":   func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"log4j.properties /dev/zero":      func(p string) error { return os.Symlink("/dev/zero", p) },
		"log4j.properties over the limit": func(p string) error { return os.WriteFile(p, make([]byte, maxLog4jBytes+1), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			h := fakeHome(t, "")
			p := filepath.Join(h.ConfDir, "log4j.properties")
			os.MkdirAll(h.ConfDir, 0o755)
			if err := mk(p); err != nil {
				t.Fatal(err)
			}
			c, _, err := h.Config()
			if err != nil {
				t.Fatal(err)
			}
			wantErr(t, within(t, func() error { return WriteConfDir(t.TempDir(), c, h, nil) }), p)
		})
	}
	t.Run("the info file a named pipe", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "external-resources.json")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		wantErr(t, within(t, func() error { _, err := readAssigned(p); return err }), p, "named pipe")
	})
}
