package logs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The fuzz targets replace a test that threw every result away: each asserts, for any input, that
// the reader does not panic, stays within its memory and output bounds
// (docs/security.md#aggregated-log-files), never returns a log file shorter than its header says
// without an error, and that a truncated file is an error, not a silently shorter log.
// `go test` runs the seeds (the real files in testdata, the crafted ones of bounds_test.go and
// what fuzzing found, testdata/fuzz). To fuzz:
//
//	go test -run XXX -fuzz FuzzTFile -fuzztime 60s -fuzzminimizetime 5s ./container/logs/
//
// (with the default minimize time of 60 s, the engine spends most of a minute shrinking each new
// input grown from the 8-20 KB real files, at 0 execs/s).

// contentBound is the most log content a file of n bytes may yield: zlib expands at most 1032
// times, and no two blocks or log files share bytes.
func contentBound(n int) int64 { return 1100*int64(n) + 1<<10 }

// checkFormat opens data with open and walks it, asserting the bounds; it returns the error.
func checkFormat(t *testing.T, data []byte, open func(io.ReaderAt, int64) (walker, error)) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var total, files int64
	var short []string
	w, err := open(bytes.NewReader(data), int64(len(data)))
	if err == nil {
		err = w.Walk(func(lf LogFile, r io.Reader) error {
			files++
			n, err := io.Copy(io.Discard, r)
			total += n
			if err != nil {
				return err
			}
			if n != lf.Length {
				short = append(short, fmt.Sprintf("%.60q of %.60q: %d of %d bytes", lf.Name, lf.Container, n, lf.Length))
			}
			return nil
		})
	}
	runtime.ReadMemStats(&after)
	if err == nil && len(short) > 0 {
		t.Errorf("no error, but log files shorter than their headers say: %v", short)
	}
	if total > contentBound(len(data)) {
		t.Errorf("a %d-byte file yielded %d bytes of logs, more than %d", len(data), total, contentBound(len(data)))
	}
	if files > contentBound(len(data))/4 {
		t.Errorf("a %d-byte file yielded %d log files", len(data), files)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20+64*uint64(len(data)) {
		t.Errorf("reading a %d-byte file allocated %d bytes", len(data), alloc)
	}
	return err
}

// checkTruncation: when data reads without error as the command reads it, a strict prefix of it
// must not, unless data holds another end marker (the BCFile magic, or the IFile's id elsewhere than
// at its ends) at which a prefix could itself be a whole file.
func checkTruncation(t *testing.T, data []byte, cut uint) {
	t.Helper()
	if len(data) == 0 {
		return
	}
	if _, _, err := readAsCommand(data, 0); err != nil {
		return
	}
	if i := bytes.Index(data, bcfileMagic[:]); i >= 0 && i != len(data)-len(bcfileMagic) {
		return
	}
	for _, k := range []int{32, 36} {
		if len(data) >= k {
			if i := bytes.Index(data[1:], data[:k]); i >= 0 && i+1 != len(data)-k {
				return
			}
		}
	}
	p := data[:int(cut%uint(len(data)))]
	if out, n, err := readAsCommand(p, 0); err == nil {
		t.Errorf("the first %d of %d bytes read without an error (%d log files, %d bytes printed)", len(p), len(data), n, out.n)
	}
}

func seedFiles(f *testing.F, glob string, format string) {
	names, _ := filepath.Glob(glob)
	if len(names) == 0 {
		f.Fatalf("no seed files %s", glob)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint(len(b)/2))
	}
	for _, c := range craftedFiles() {
		if strings.HasPrefix(c.name, format) && !c.noSeed {
			f.Add(c.data(), uint(7))
		}
	}
}

func FuzzTFile(f *testing.F) {
	seedFiles(f, "testdata/tfile-3.4/127.0.0.*", "TFile")
	for _, codec := range []string{"none", "gz"} {
		f.Add(buildTFile(tfileSpec{codec: codec, blocks: [][]byte{
			tRecord("VERSION", []byte{0, 0, 0, 1}),
			tRecord("container_1_0001_01_000001", tContainer([2]string{"stdout", "hello\n"}, [2]string{"stderr", ""})),
		}}), uint(40))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		checkFormat(t, data, openTFile)
		checkTruncation(t, data, cut)
	})
}

func FuzzIFile(f *testing.F) {
	seedFiles(f, "testdata/ifile-3.4/127.0.0.*", "IFile")
	m := newIFileMeta()
	content := zlibBytes([]byte("hello\n"))
	m.meta("gz", func() {
		m.cycle(map[string][]func(){"container_1_0001_01_000001": {func() { m.file("stdout", 6, 32, int64(len(content))) }}})
	})
	f.Add(buildIFile(content, m.w.Bytes()), uint(50))
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		checkFormat(t, data, openIFile)
		checkTruncation(t, data, cut)
	})
}

// tailModel is --tail written the simple way, on the whole input: the last n lines, each cut to
// maxLine bytes, then the oldest left out until the rest fit maxBytes (at least one kept).
func tailModel(in string, n, maxLine, maxBytes int) string {
	if in == "" {
		return ""
	}
	lines := strings.SplitAfter(in, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	last := lines[max(0, len(lines)-n):]
	type kept struct {
		s   string
		cut int
	}
	var ks []kept
	size := 0
	for _, l := range last {
		l = strings.TrimSuffix(l, "\n")
		k := kept{l, 0}
		if len(l) > maxLine {
			k = kept{l[:maxLine], len(l) - maxLine}
		}
		ks = append(ks, k)
		size += len(k.s) + tailLineCost
	}
	for size > maxBytes && len(ks) > 1 {
		size -= len(ks[0].s) + tailLineCost
		ks = ks[1:]
	}
	var b strings.Builder
	if left := len(last) - len(ks); left > 0 {
		fmt.Fprintf(&b, "[yarn-am logs: --tail %d: %d earlier lines left out: the lines kept may hold %d MiB]\n", n, left, maxBytes>>20)
	}
	for _, k := range ks {
		b.WriteString(k.s)
		if k.cut > 0 {
			fmt.Fprintf(&b, " [yarn-am logs: line cut: %d more bytes not shown (--tail keeps %d KiB of a line)]", k.cut, maxLine>>10)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzTail: --tail prints what tailModel says, for small bounds so that fuzzing reaches the cuts.
func FuzzTail(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), uint8(2), uint8(8), uint16(200))
	f.Add([]byte("a very long line indeed\nshort\n\n\nno newline"), uint8(3), uint8(5), uint16(150))
	f.Add([]byte(strings.Repeat("line\n", 100)), uint8(50), uint8(3), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, n, maxLine uint8, maxBytes uint16) {
		tail, ml, mb := int(n%64)+1, int(maxLine)+1, int(maxBytes)+1
		var out bytes.Buffer
		if err := tailBounded(&out, bytes.NewReader(data), tail, ml, mb); err != nil {
			t.Fatal(err)
		}
		if want := tailModel(string(data), tail, ml, mb); out.String() != want {
			t.Errorf("tail %d (lines of %d, %d bytes) of %q:\n got %q\nwant %q", tail, ml, mb, data, out.String(), want)
		}
	})
}
