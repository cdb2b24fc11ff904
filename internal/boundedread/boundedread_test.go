package boundedread

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// OpenOwnRegular opens a regular file and names anything else in its place without opening it: a
// named pipe (no block), a link (not followed, even to a regular file), a directory.
func TestOpenOwnRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenOwnRegular(file)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"pipe": "is a named pipe", "link": "is a symbolic link", ".": "is a directory"} {
		f, err := OpenOwnRegular(filepath.Join(dir, name))
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		if !strings.Contains(err.Error(), want+", not a regular file") {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if _, err := OpenOwnRegular(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}
