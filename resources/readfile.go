package resources

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The most yarn-am reads of a configuration file (docs/running.md#limits-on-input-files): far above
// any real one, so a larger file is a mistake (or hostile), and reading it whole would cost the memory.
const (
	MaxJobFileBytes   = 1 << 20 // a job.toml
	MaxFlinkConfBytes = 1 << 20 // a flink-conf.yaml or config.yaml
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
	m := st.Mode()
	kind := ""
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s %s is a directory; give the path of %s", what, path, want)
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		kind = "a device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	default:
		kind = "not a file"
	}
	return fmt.Errorf("%s %s is %s, not a regular file; give the path of %s", what, path, kind, want)
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
