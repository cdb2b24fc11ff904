// Package rollingfile is a writer that keeps a process's output within a bounded size on disk: the
// file rolls at a size, and only a count of files is kept (docs/flink.md#logs-that-roll).
//
// The file being written is always Path; a rolled part is Path.<n>, n counting up from 1 and never
// reused while a part of that number exists, so a rolled part keeps its name and content until it
// is deleted. YARN's rolling log aggregation relies on that: the NodeManager uploads the files a
// pattern matches and then deletes them by name (AppLogAggregatorImpl's deletion of the files it
// uploaded in a cycle), so a part renamed between the upload and the deletion would lose another
// part's content. The oldest parts beyond the count are deleted at each roll; parts the NodeManager
// deleted first leave gaps in the numbers, which is fine.
//
// A File is safe for concurrent writers (a JVM's stdout and stderr copied by two goroutines may share
// one; each write is whole in one part unless it is larger than the size).
package rollingfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// MinSize is the smallest size a file may roll at: below it, a long line (a JVM's classpath) would
// be split over parts.
const MinSize = 64 << 10

// MinFiles is the fewest files kept: the one being written and one rolled part.
const MinFiles = 2

// File writes to Path, rolling it to Path.<n> before a write would take it past Size, and keeping at
// most Files files (Path and the newest Files-1 parts).
type File struct {
	path  string
	size  int64
	files int

	mu   sync.Mutex
	f    *os.File
	cur  int64
	next int // the number the next rolled part gets
	err  error
}

// Open opens path for writing, rolling at size bytes and keeping files files. An existing non-empty
// file at path (an earlier process's output) is rolled first, so that the new process starts a new
// file and the earlier output is kept as a part.
func Open(path string, size int64, files int) (*File, error) {
	if size < MinSize {
		return nil, fmt.Errorf("rolling file %s: size %d bytes: want at least %d (64 KiB)", path, size, MinSize)
	}
	if files < MinFiles {
		return nil, fmt.Errorf("rolling file %s: %d files: want at least %d (the file written and one rolled part)", path, files, MinFiles)
	}
	r := &File{path: path, size: size, files: files}
	parts, err := r.parts()
	if err != nil {
		return nil, err
	}
	r.next = 1
	if len(parts) > 0 {
		r.next = parts[len(parts)-1] + 1
	}
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		if err := r.roll(); err != nil {
			return nil, err
		}
	}
	if r.f == nil {
		if err := r.create(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Path is the file being written.
func (r *File) Path() string { return r.path }

// Write writes p, rolling first when it would take the file past the size; a p larger than the
// size is split over parts of the size. After a failure to roll, every write returns that error.
func (r *File) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	written := 0
	for len(p) > 0 {
		if r.cur > 0 && r.cur+int64(len(p)) > r.size {
			if err := r.roll(); err != nil {
				r.err = err
				return written, err
			}
		}
		chunk := p[:min(int64(len(p)), r.size-r.cur)]
		n, err := r.f.Write(chunk)
		written += n
		r.cur += int64(n)
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Close closes the file being written.
func (r *File) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	if r.err == nil {
		r.err = os.ErrClosed
	}
	return err
}

// roll renames the file to the next part, starts a new one and deletes the parts beyond the count.
func (r *File) roll() error {
	if r.f != nil {
		if err := r.f.Close(); err != nil {
			return fmt.Errorf("rolling %s: %w", r.path, err)
		}
		r.f = nil
	}
	if err := os.Rename(r.path, r.path+"."+strconv.Itoa(r.next)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rolling %s: %w", r.path, err)
	}
	r.next++
	if err := r.create(); err != nil {
		return err
	}
	parts, err := r.parts()
	if err != nil {
		return err
	}
	for len(parts) > r.files-1 {
		// Gone already (the NodeManager deleted what it uploaded) is what we wanted.
		if err := os.Remove(r.path + "." + strconv.Itoa(parts[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the oldest part of %s: %w", r.path, err)
		}
		parts = parts[1:]
	}
	return nil
}

func (r *File) create() error {
	// O_EXCL is not wanted: a file someone created in between is ours to replace (the directory is
	// the container's own).
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("rolling file: %w", err)
	}
	r.f, r.cur = f, 0
	return nil
}

// parts returns the numbers of the rolled parts that exist, oldest (smallest) first.
func (r *File) parts() ([]int, error) {
	entries, err := os.ReadDir(filepath.Dir(r.path))
	if err != nil {
		return nil, fmt.Errorf("rolling file %s: %w", r.path, err)
	}
	prefix := filepath.Base(r.path) + "."
	var out []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" || rest[0] == '0' || len(rest) > 9 {
			continue
		}
		n, _ := strconv.Atoi(rest)
		out = append(out, n)
	}
	sort.Ints(out)
	return out, nil
}
