package rollingfile

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listing is the directory's files with their sizes.
func listing(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		out[e.Name()] = info.Size()
	}
	return out
}

// TestRollingFileIsBoundedInSizeAndCount: 1 MiB written in lines to a file rolling at 64 KiB with 3
// files kept leaves taskmanager.out and the two newest parts, each at most 64 KiB, the parts numbered
// up from 1 and never renamed, and the newest content whole at the end.
func TestRollingFileIsBoundedInSizeAndCount(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "taskmanager.out")
	r, err := Open(p, MinSize, 3)
	require.NoError(t, err)
	var all bytes.Buffer
	line := 0
	for all.Len() < 1<<20 {
		s := strings.Repeat("x", line%200) + "\n"
		line++
		all.WriteString(s)
		n, err := r.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	require.NoError(t, r.Close())
	files := listing(t, dir)
	require.Len(t, files, 3, "the file and two parts: %v", files)
	var names []string
	for name, size := range files {
		assert.LessOrEqual(t, size, int64(MinSize), name)
		names = append(names, name)
	}
	sort.Strings(names)
	// Every write was whole, so the parts hold whole lines: the last parts and the file, in order,
	// are the end of what was written.
	var tail []byte
	var parts []string
	for _, n := range names {
		if n != "taskmanager.out" {
			parts = append(parts, n)
		}
	}
	require.Len(t, parts, 2)
	sort.Slice(parts, func(i, j int) bool {
		return len(parts[i]) < len(parts[j]) || len(parts[i]) == len(parts[j]) && parts[i] < parts[j]
	})
	for _, n := range append(parts, "taskmanager.out") {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		assert.True(t, len(b) == 0 || b[len(b)-1] == '\n', "%s ends with a whole line", n)
		tail = append(tail, b...)
	}
	assert.True(t, bytes.HasSuffix(all.Bytes(), tail), "the files kept are the end of the output")
	// 1 MiB in parts of at most 64 KiB: at least 16 rolls, so the newest part is numbered 16 or more
	// and the oldest ones were deleted, not renamed.
	assert.NotContains(t, files, "taskmanager.out.1")
	assert.Greater(t, len(parts[1]), len("taskmanager.out.9"))
}

// TestRollingFileSplitsAWriteLargerThanTheSize: one write of 3.5 × the size lands in parts of
// exactly the size, and nothing of it is lost while the count holds it.
func TestRollingFileSplitsAWriteLargerThanTheSize(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "jobmanager.err")
	r, err := Open(p, MinSize, 5)
	require.NoError(t, err)
	big := bytes.Repeat([]byte("0123456789abcdef"), 7*MinSize/32)
	n, err := r.Write(big)
	require.NoError(t, err)
	require.Equal(t, len(big), n)
	require.NoError(t, r.Close())
	assert.Equal(t, map[string]int64{"jobmanager.err.1": MinSize, "jobmanager.err.2": MinSize, "jobmanager.err.3": MinSize, "jobmanager.err": MinSize / 2}, listing(t, dir))
	var got []byte
	for _, n := range []string{"jobmanager.err.1", "jobmanager.err.2", "jobmanager.err.3", "jobmanager.err"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		got = append(got, b...)
	}
	assert.Equal(t, big, got)
}

// TestRollingFileKeepsAnEarlierProcessesOutput: a second Open (a process restarted into the same log
// directory) rolls the earlier file to the next free number instead of truncating it, and parts a
// NodeManager already deleted leave gaps that are not refilled.
func TestRollingFileKeepsAnEarlierProcessesOutput(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "jobmanager.out")
	require.NoError(t, os.WriteFile(p, []byte("first run\n"), 0o640))
	require.NoError(t, os.WriteFile(p+".4", []byte("older\n"), 0o640))
	require.NoError(t, os.WriteFile(p+".x", []byte("not a part\n"), 0o640))
	r, err := Open(p, MinSize, 3)
	require.NoError(t, err)
	_, err = r.Write([]byte("second run\n"))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	b, err := os.ReadFile(p + ".5")
	require.NoError(t, err)
	assert.Equal(t, "first run\n", string(b))
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "second run\n", string(b))
	assert.FileExists(t, p+".4")
	assert.FileExists(t, p+".x", "a name that is not a part is left alone")
}

// TestRollingFileRefusesBoundsBelowItsMinimum: the size and count are checked, naming the minimum.
func TestRollingFileRefusesBoundsBelowItsMinimum(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "a"), MinSize-1, 3)
	require.ErrorContains(t, err, "want at least 65536 (64 KiB)")
	_, err = Open(filepath.Join(dir, "a"), MinSize, 1)
	require.ErrorContains(t, err, "want at least 2")
}

// TestRollingFileConcurrentWritersStayBounded: two goroutines (a JVM's stdout and stderr) writing
// into one file under -race keep every part within the size and every write whole.
func TestRollingFileConcurrentWritersStayBounded(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(filepath.Join(dir, "out"), MinSize, 4)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := []byte(strings.Repeat(string(rune('a'+g)), 999) + "\n")
			for range 400 {
				_, err := r.Write(line)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, r.Close())
	files := listing(t, dir)
	assert.Len(t, files, 4)
	for name, size := range files {
		assert.LessOrEqual(t, size, int64(MinSize), name)
		assert.Zero(t, size%1000, "%s holds whole writes", name)
	}
}
