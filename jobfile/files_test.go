package jobfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadableLocalFile: a listed file staging cannot read (mode 000, another user's) is reported by
// the job check, not after the application id was taken. Root reads a file of mode 000, so the open is
// made to fail as it does for other users.
func TestUnreadableLocalFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.bin")
	if err := os.WriteFile(p, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "job.toml")
	if err := os.WriteFile(job, []byte("[taskexecutor]\ncommand = \"./w\"\nfiles = [\"w.bin\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(o func(string) (*os.File, error)) { openForRead = o }(openForRead)
	openForRead = func(name string) (*os.File, error) {
		if os.Geteuid() != 0 {
			return os.Open(name)
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	_, err := LoadJob(job)
	if err == nil || !strings.Contains(err.Error(), `"w.bin" cannot be read (permission denied)`) {
		t.Fatalf("LoadJob = %v, want w.bin cannot be read (permission denied)", err)
	}
}
