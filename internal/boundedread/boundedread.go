// Package boundedread reads configuration files a user or a neighbour controls: regular files only,
// at most a given size, so that a named pipe, a device such as /dev/zero or a huge file is refused with
// a clear error instead of blocking or exhausting memory (docs/running.md#limits-on-input-files). The
// job file, Flink configurations and Hadoop's site files are read through it.
package boundedread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadFile reads a configuration file whole; what names it in errors ("job file", "flink-conf file")
// and want says what to give instead ("a job.toml"). A path that is not a regular file is refused
// without reading it: a directory, a named pipe (reading it blocks until someone writes), a device such
// as /dev/zero (it never ends), a socket. So is a file of more than limit bytes. Other errors are the os
// package's (fs.ErrNotExist, fs.ErrPermission), for the caller to word.
func ReadFile(what, path, want string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(what, path, want, st); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a named pipe put in the file's place after the Stat does not block the open; the
	// Stat of what was opened refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regular(what, path, want, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s %s is larger than %s, the most yarn-am reads of it (docs/running.md#limits-on-input-files); a real one is far smaller: check that this is the file you meant",
			what, path, sizeText(limit))
	}
	return data, nil
}

func regular(what, path, want string, st fs.FileInfo) error {
	switch kind := NotRegular(st.Mode()); kind {
	case "":
		return nil
	case "a directory":
		return fmt.Errorf("%s %s is a directory; give the path of %s", what, path, want)
	default:
		return fmt.Errorf("%s %s is %s, not a regular file; give the path of %s", what, path, kind, want)
	}
}

// NotRegular says what a file of mode m is when it is not a regular file ("a directory", "a symbolic
// link" (an Lstat's), "a named pipe", "a device", "a socket", "not a file"), or "" when it is one.
func NotRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a file"
}

// OpenRegular opens path for reading only if it is a regular file. The open does not block on a named
// pipe put in its place (O_NONBLOCK), and what was opened is checked again.
func OpenRegular(path string) (*os.File, error) {
	return openRegular(path, 0)
}

// OpenOwnRegular is OpenRegular for a file another process writes for this one to read (a driver's
// outcome for the AM): a symbolic link in its place is refused too, never followed (Lstat, then
// O_NOFOLLOW against one put there after it), so what is opened is the file named, never a pipe,
// device or other file a link points to.
func OpenOwnRegular(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if kind := NotRegular(st.Mode()); kind != "" {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, kind)
	}
	f, err := openRegular(path, syscall.O_NOFOLLOW)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link, not a regular file", path)
	}
	return f, err
}

func openRegular(path string, flags int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if kind := NotRegular(st.Mode()); kind != "" {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a regular file", path, kind)
	}
	return f, nil
}

// sizeText renders a byte count as the limits are written: "1 MiB", "64 KiB".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
