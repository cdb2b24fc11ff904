package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// only fails t unless dir holds exactly the named files: no temporary file left behind.
func only(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWriteSetsTheModeAskedNotTheUmasks: the new file has the bits asked for, whatever the umask and
// whatever the old file's mode was.
func TestWriteSetsTheModeAskedNotTheUmasks(t *testing.T) {
	old := syscall.Umask(0o077) // a temporary file would be 0600 at most, and 0644 would come out 0600
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o755, 0o400, 0o600} {
		if err := Write(path, []byte("new"), mode); err != nil {
			t.Fatalf("Write(%v): %v", mode, err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("Write(%v) made %v", mode, fi.Mode())
		}
		if got := content(t, path); got != "new" {
			t.Errorf("Write(%v): %q, want %q", mode, got, "new")
		}
	}
	only(t, dir, "f")
}

// TestAFailedWriteKeepsTheOldFile: an error of the content's writer, of the rename or of the
// temporary file's creation leaves the old content in place, returns the error and no temporary file.
func TestAFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFunc(path, 0o644, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the n")); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Errorf("WriteFunc: %v, want the writer's own error", err)
	}
	if got := content(t, path); got != "old" {
		t.Errorf("after a failed write: %q, want the old content", got)
	}
	only(t, dir, "f")

	// A directory in the target's place: the rename fails after the temporary file is complete.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(sub, []byte("new"), 0o600); err == nil || !strings.Contains(err.Error(), sub) {
		t.Errorf("Write over a directory: %v, want an error naming it", err)
	}
	only(t, dir, "f", "sub")

	// No directory for the temporary file: nothing is created.
	missing := filepath.Join(dir, "missing", "f")
	if err := Write(missing, []byte("new"), 0o600); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write in a missing directory: %v, want os.ErrNotExist", err)
	}
	only(t, dir, "f", "sub")
}

// TestAReaderSeesTheOldFileWhileTheNewOneIsWritten: half-way through a write the path still reads as
// the whole old file, and once the write returns as the whole new one.
func TestAReaderSeesTheOldFileWhileTheNewOneIsWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	oldData := bytes.Repeat([]byte("o"), 1<<16)
	newData := bytes.Repeat([]byte("n"), 1<<16)
	if err := os.WriteFile(path, oldData, 0o600); err != nil {
		t.Fatal(err)
	}
	var midway []byte
	err := WriteFunc(path, 0o600, func(w io.Writer) error {
		if _, err := w.Write(newData[:len(newData)/2]); err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		midway = b
		if err != nil {
			return err
		}
		_, err = w.Write(newData[len(newData)/2:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(midway, oldData) {
		t.Errorf("half-way through the write the path read %d bytes, not the old %d", len(midway), len(oldData))
	}
	if got := content(t, path); got != string(newData) {
		t.Errorf("after the write the path reads %d bytes, not the new %d", len(got), len(newData))
	}
	only(t, dir, "f")
}

// TestTheTemporaryFileIsBesideTheTarget: the temporary file is in the target's directory (one
// filesystem, so the rename is atomic), named "."+base+".*" or by TempPattern.
func TestTheTemporaryFileIsBesideTheTarget(t *testing.T) {
	for _, c := range []struct {
		opts   []Option
		prefix string
	}{
		{nil, ".target.json."},
		{[]Option{TempPattern(".own-name-*")}, ".own-name-"},
		{[]Option{TempPattern("target.json.*"), Sync()}, "target.json."},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "target.json")
		var seen []string
		err := WriteFunc(path, 0o600, func(w io.Writer) error {
			entries, err := os.ReadDir(dir)
			for _, e := range entries {
				seen = append(seen, e.Name())
			}
			return err
		}, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 1 || !strings.HasPrefix(seen[0], c.prefix) || seen[0] == c.prefix {
			t.Errorf("while writing, %s held %q, want one file named %s<random>", dir, seen, c.prefix)
		}
		only(t, dir, "target.json")
	}
}

// TestWhatIsInThePathsPlaceIsReplacedNotOpened: a named pipe at the path does not block the write,
// and a symbolic link there is replaced, its target left as it was.
func TestWhatIsInThePathsPlaceIsReplacedNotOpened(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader on the pipe, so that a writer that opened it would fail this test rather than hang it.
	r, err := os.OpenFile(pipe, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	elsewhere := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(elsewhere, []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{pipe, link} {
		if err := Write(path, []byte("ours"), 0o600); err != nil {
			t.Fatalf("Write(%s): %v", path, err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Errorf("%s is %v, want a regular file", path, fi.Mode())
		} else if got := content(t, path); got != "ours" {
			t.Errorf("%s holds %q, want %q", path, got, "ours")
		}
	}
	if got := content(t, elsewhere); got != "theirs" {
		t.Errorf("the link's target now holds %q, want %q", got, "theirs")
	}
}
