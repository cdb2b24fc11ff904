// Package atomicfile replaces a file in one step, the one place of the module's rule for it: a reader
// of the path sees the old file or the new one, never half of one, and a writer that fails leaves the
// old one in place. The new content goes to a temporary file in the target's own directory (so the
// rename stays on one filesystem, where rename(2) is atomic), its permission bits are set explicitly
// (not left to the umask), and it is renamed over the target. The rename replaces whatever is at the
// path without opening it, so a named pipe there cannot block the writer nor a symbolic link there send
// the data elsewhere (framework/flink's TestPublishOutcomeReplacesWhatIsInItsPlace). The temporary
// file is removed on any error.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Option changes how Write and WriteFunc replace a file.
type Option func(*options)

type options struct {
	pattern string
	sync    bool
}

// TempPattern names the temporary file as os.CreateTemp's pattern does (its last "*" becomes a random
// string), for a caller whose leftovers must keep a name of their own; the default is "."+base+".*",
// base being the target's file name.
func TempPattern(pattern string) Option { return func(o *options) { o.pattern = pattern } }

// Sync flushes the new content to stable storage before the rename, so that after a crash of the
// machine the path holds the old content or all of the new, not an empty file.
func Sync() Option { return func(o *options) { o.sync = true } }

// Write replaces path with data, of permission bits mode. Errors are the os package's, naming the
// file; the caller words them.
func Write(path string, data []byte, mode os.FileMode, opts ...Option) error {
	return WriteFunc(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, opts...)
}

// WriteFunc replaces path with what write writes, of permission bits mode, for content too large to
// hold in memory. An error of write is returned as it is, and path is left as it was.
func WriteFunc(path string, mode os.FileMode, write func(io.Writer) error, opts ...Option) (err error) {
	o := options{pattern: "." + filepath.Base(path) + ".*"}
	for _, opt := range opts {
		opt(&o)
	}
	f, err := os.CreateTemp(filepath.Dir(path), o.pattern)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if o.sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	closed = true
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
