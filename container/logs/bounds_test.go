package logs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// memFS is one aggregated node file in memory, as the FS the command reads.
type memFS map[string][]byte

func (m memFS) ReadDir(string) ([]os.FileInfo, error) { return nil, errors.New("not listed") }
func (m memFS) Open(name string) (ReadAtCloser, error) {
	b, ok := m[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return nopCloser{bytes.NewReader(b)}, nil
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// countWriter counts what was printed and keeps its first 1 MiB.
type countWriter struct {
	n    int64
	head bytes.Buffer
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	if room := 1<<20 - c.head.Len(); room > 0 {
		c.head.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}

// readAsCommand reads data as `yarn-am logs` reads a node file (TFile, else IFile), printing to a
// counting writer.
func readAsCommand(data []byte, tail int) (*countWriter, int, error) {
	out := &countWriter{}
	p := &Printer{W: out, Tail: tail}
	err := readNodeFile(memFS{"f": data}, "f", int64(len(data)), "node:1", Filter{}, p, map[string]bool{})
	return out, p.Printed(), err
}

// measured runs fn and returns the bytes it allocated (runtime.MemStats.TotalAlloc); it fails the
// test if fn has not returned within a minute (the self-super-class file looped forever).
func measured(t *testing.T, fn func()) uint64 {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("still reading after a minute")
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestCraftersMakeReadableFiles: the builders the crafted inputs use make files the readers read
// exactly, so each crafted input below differs from a good file only by its damage.
func TestCraftersMakeReadableFiles(t *testing.T) {
	for _, codec := range []string{"none", "gz"} {
		tf := buildTFile(tfileSpec{codec: codec, blocks: [][]byte{
			tRecord("VERSION", []byte{0, 0, 0, 1}),
			tRecord("container_1_0001_01_000001", tContainer([2]string{"stdout", "hello\n"}, [2]string{"stderr", "oops\n"})),
		}})
		out, n, err := readAsCommand(tf, 0)
		if err != nil || n != 2 || !strings.Contains(out.head.String(), "stderr (5 bytes) <==\noops\n") {
			t.Errorf("TFile %s: %d files, %v:\n%s", codec, n, err, out.head.String())
		}
	}
	m := newIFileMeta()
	content := zlibBytes([]byte("hello\n"))
	m.meta("gz", func() {
		m.cycle(map[string][]func(){"container_1_0001_01_000001": {func() { m.file("stdout", 6, 32, int64(len(content))) }}})
	})
	out, n, err := readAsCommand(buildIFile(content, m.w.Bytes()), 0)
	if err != nil || n != 1 || !strings.Contains(out.head.String(), "stdout (6 bytes) <==\nhello\n") {
		t.Errorf("IFile: %d files, %v:\n%s", n, err, out.head.String())
	}
}

// A crafted file and what the readers must say about it, within what memory.
type crafted struct {
	name    string
	data    func() []byte
	wantErr string
	maxHeap uint64 // bytes reading it may allocate
	// noSeed keeps it out of the fuzz seeds: large files, or ones whose mutants decompress
	// megabytes, cut fuzzing to a few execs a second (every input with new coverage is minimized).
	noSeed bool
}

func craftedFiles() []crafted {
	return []crafted{
		{
			// A class descriptor whose super class is a reference to itself: objects of it walked
			// their class chain forever.
			name: "IFile class that is its own super class",
			data: func() []byte {
				w := newJW()
				w.WriteByte(tcObject)
				w.class("X", 0x02, nil, func() { w.ref(0) })
				return buildIFile(nil, w.Bytes())
			},
			wantErr: `class "X" is its own super class`,
			maxHeap: 1 << 20,
		},
		{
			// The same through a second class: A's super class is B, whose super class is A.
			name: "IFile classes that are each other's super class",
			data: func() []byte {
				w := newJW()
				w.WriteByte(tcObject)
				w.class("A", 0x02, nil, func() { w.class("B", 0x02, nil, func() { w.ref(0) }) })
				return buildIFile(nil, w.Bytes())
			},
			wantErr: `class "A" is its own super class`,
			maxHeap: 1 << 20,
		},
		{
			// 1,000 references to one aggregation cycle whose container lists 1,000 references to
			// one file meta: a 10 KB file indexed 1,000,000 log files (830 MiB).
			name: "IFile back-reference explosion",
			data: func() []byte {
				m := newIFileMeta()
				var cyc, fm int
				files := []func(){func() { fm = m.file("stdout", 0, 32, 0) }}
				for range 999 {
					files = append(files, func() { m.w.ref(fm) })
				}
				cycles := []func(){func() { cyc = m.cycle(map[string][]func(){"container_1_0001_01_000001": files}) }}
				for range 999 {
					cycles = append(cycles, func() { m.w.ref(cyc) })
				}
				m.meta("none", cycles...)
				return buildIFile(nil, m.w.Bytes())
			},
			wantErr: "appears more than once",
			maxHeap: 4 << 20,
		},
		{
			// Two log files on the same compressed bytes: each would print them again.
			name: "IFile log files sharing bytes",
			data: func() []byte {
				m := newIFileMeta()
				z := zlibBytes(bytes.Repeat([]byte("x"), 1<<20))
				var list []func()
				for i := range 100 {
					list = append(list, func() { m.file(fmt.Sprint("f", i), 1<<20, 32, int64(len(z))) })
				}
				m.meta("gz", func() { m.cycle(map[string][]func(){"container_1_0001_01_000001": list}) })
				return buildIFile(z, m.w.Bytes())
			},
			wantErr: "overlaps",
			noSeed:  true,
			maxHeap: 4 << 20,
		},
		{
			// Arrays nested 100,000 deep: the recursive decoder's stack grew with them.
			name: "IFile nesting",
			data: func() []byte {
				w := newJW()
				w.WriteByte(tcArray)
				w.class("[Ljava.lang.Object;", 0x02, nil, nil)
				w.handle()
				w.u32(1)
				for range 100000 {
					w.WriteByte(tcArray)
					w.ref(0)
					w.handle()
					w.u32(1)
				}
				w.WriteByte(tcNull)
				return buildIFile(nil, w.Bytes())
			},
			wantErr: "nested more than 32 deep",
			noSeed:  true,
			maxHeap: 4 << 20,
		},
		{
			name: "IFile file name longer than 255 bytes",
			data: func() []byte {
				m := newIFileMeta()
				m.meta("none", func() {
					m.cycle(map[string][]func(){"container_1_0001_01_000001": {func() { m.file(strings.Repeat("n", 300), 0, 32, 0) }}})
				})
				return buildIFile(nil, m.w.Bytes())
			},
			wantErr: "longer than 255",
			maxHeap: 1 << 20,
		},
		{
			// A class of 65,535 one-byte fields and 200 objects of it: 13 million fields from a
			// 13 MB meta, a map entry each.
			name: "IFile class of 65,535 fields",
			data: func() []byte {
				w := newJW()
				fields := make([]string, 65535)
				for i := range fields {
					fields[i] = fmt.Sprintf("B%x", i)
				}
				w.WriteByte(tcArray)
				w.class("[Ljava.lang.Object;", 0x02, nil, nil)
				w.handle()
				w.u32(120)
				w.WriteByte(tcObject)
				c := w.class("W", 0x02, fields, nil)
				w.handle()
				w.Write(make([]byte, len(fields)))
				for range 119 {
					w.WriteByte(tcObject)
					w.ref(c)
					w.handle()
					w.Write(make([]byte, len(fields)))
				}
				return buildIFile(nil, w.Bytes())
			},
			wantErr: "more than 1048576 serialized values",
			noSeed:  true,
			maxHeap: 256 << 20,
		},
		{
			// A 48 MiB data index of zeros compresses to 47 KiB and claims 16,777,216 empty blocks
			// at offset 0: the reader kept them all (1.9 GiB) before reading any.
			name: "TFile claiming 16,777,216 blocks",
			data: func() []byte {
				idx := append(tString("none"), tVLong(1<<24)...)
				idx = append(idx, make([]byte, 3<<24)...)
				return buildTFile(tfileSpec{codec: "gz", index: idx})
			},
			wantErr: "16777216 data blocks claimed",
			noSeed:  true,
			maxHeap: 1 << 20,
		},
		{
			// 1,000 data blocks on one compressed block of 1 MiB: each would print it again.
			name: "TFile blocks sharing bytes",
			data: func() []byte {
				raw := tRecord("container_1_0001_01_000001", tContainer([2]string{"stdout", strings.Repeat("x", 1<<20)}))
				z := zlibBytes(raw)
				idx := append(tString("gz"), tVLong(1000)...)
				for range 1000 {
					idx = append(idx, tVLong(16)...)
					idx = append(idx, tVLong(int64(len(z)))...)
					idx = append(idx, tVLong(int64(len(raw)))...)
				}
				return buildTFile(tfileSpec{codec: "none", pre: z, index: idx})
			},
			wantErr: "overlap",
			noSeed:  true,
			maxHeap: 4 << 20,
		},
	}
}

// TestCraftedLogFilesAreBounded: each crafted file that hung the reader, exhausted its memory or
// printed the same bytes many times over gives an error naming the damage, quickly and within a
// few MiB (measured as bytes allocated, runtime.MemStats.TotalAlloc); nothing is printed of it.
func TestCraftedLogFilesAreBounded(t *testing.T) {
	for _, c := range craftedFiles() {
		t.Run(c.name, func(t *testing.T) {
			data := c.data()
			var out *countWriter
			var err error
			alloc := measured(t, func() { out, _, err = readAsCommand(data, 0) })
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%d-byte file: err = %v, want one containing %q", len(data), err, c.wantErr)
			}
			if alloc > c.maxHeap {
				t.Errorf("%d-byte file: reading it allocated %d bytes, more than %d", len(data), alloc, c.maxHeap)
			}
			if out.n > 0 {
				t.Errorf("%d bytes printed of a damaged file:\n%.300s", out.n, out.head.String())
			}
			t.Logf("%d-byte file: %v; %d bytes allocated", len(data), err, alloc)
		})
	}
}

type repeatX struct{}

func (repeatX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestTailIsBounded: --tail holds at most maxTailLine bytes of a line and maxTailBytes of lines,
// and says what it left out. A 256 MiB line was kept whole (538 MB allocated reading it).
func TestTailIsBounded(t *testing.T) {
	t.Run("a 256 MiB line", func(t *testing.T) {
		r := io.MultiReader(strings.NewReader("first\n"), io.LimitReader(repeatX{}, 256<<20), strings.NewReader("\nlast\n"))
		var out bytes.Buffer
		var err error
		alloc := measured(t, func() { err = (&Printer{W: &out, Tail: 2}).Content(r) })
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Repeat("x", maxTailLine) + fmt.Sprintf(" [yarn-am logs: line cut: %d more bytes not shown (--tail keeps 64 KiB of a line)]\nlast\n", 256<<20-maxTailLine)
		if out.String() != want {
			t.Errorf("tail 2 = %.80q ... %q (%d bytes), want the line's first 64 KiB, a note and the last line", out.String(), out.String()[max(0, out.Len()-120):], out.Len())
		}
		if alloc > 4<<20 {
			t.Errorf("reading a 256 MiB line allocated %d bytes, more than 4 MiB", alloc)
		}
		t.Logf("%d bytes allocated", alloc)
	})
	t.Run("the last lines need more than maxTailBytes", func(t *testing.T) {
		line := strings.Repeat("y", maxTailLine-1) + "\n"
		r := io.MultiReader(strings.NewReader("old\n"), io.LimitReader(&repeatString{s: line}, int64(len(line))*1000))
		var out bytes.Buffer
		if err := (&Printer{W: &out, Tail: 1000}).Content(r); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		kept := maxTailBytes / (maxTailLine + tailLineCost)
		if len(lines) != kept+1 || lines[0] != fmt.Sprintf("[yarn-am logs: --tail 1000: %d earlier lines left out: the lines kept may hold 32 MiB]", 1000-kept) {
			t.Errorf("%d lines printed, the first %.120q; want %d and a note", len(lines), lines[0], kept)
		}
		if out.Len() > maxTailBytes+1000 {
			t.Errorf("printed %d bytes, more than the %d kept", out.Len(), maxTailBytes)
		}
	})
}

type repeatString struct {
	s string
	i int
}

func (r *repeatString) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.s[r.i:])
		n += k
		r.i = (r.i + k) % len(r.s)
	}
	return n, nil
}

// TestPrintedNamesCannotDriveTheTerminal: container, node and file names come from the file (the
// application's owner wrote it): the headers and notes print them without escape sequences.
func TestPrintedNamesCannotDriveTheTerminal(t *testing.T) {
	evil := "\x1b]52;c;ZWNobyBldmls\x07\x1b[2J\u009b31m"
	tf := buildTFile(tfileSpec{codec: "none", blocks: [][]byte{
		tRecord("container_1_0001_01_000001"+evil, tContainer([2]string{"std" + evil + "out", "hi\n"})),
	}})
	out := &countWriter{}
	p := &Printer{W: out}
	if err := readNodeFile(memFS{"f": tf}, "f", int64(len(tf)), "node"+evil+":1", Filter{}, p, map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.head.String(), "==> container_1_0001_01_000001 on node:1: stdout (3 bytes) <==\nhi\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	var notes bytes.Buffer
	fmt.Fprintf(sanitizingWriter{&notes}, "yarn-am logs: could not read %s\n", "f"+evil)
	if notes.String() != "yarn-am logs: could not read f\n" {
		t.Errorf("note %q", notes.String())
	}
}

// TestManySmallBlocksAreCheap: a file of many tiny blocks (or log files) costs memory in
// proportion to its size, not 64 KiB of fresh buffers and inflate state per block: 250,000 blocks
// of 4 bytes made a 3.7 MB file allocate 15.7 GB (26 GB with gz) and take 5 s (9 s).
func TestManySmallBlocksAreCheap(t *testing.T) {
	var blocks [][]byte
	for range 250000 {
		blocks = append(blocks, tRecord("", nil)) // an empty key and value: a record of 4 bytes
	}
	for _, codec := range []string{"none", "gz"} {
		data := buildTFile(tfileSpec{codec: codec, blocks: blocks})
		var err error
		alloc := measured(t, func() { _, _, err = readAsCommand(data, 0) })
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		if limit := 32 * raceAllocFactor * uint64(len(data)); alloc > limit {
			t.Errorf("%s: reading %d blocks (%d bytes) allocated %d bytes, more than %d", codec, len(blocks), len(data), alloc, limit)
		}
		t.Logf("%s: %d bytes, %d blocks: %d MB allocated", codec, len(data), len(blocks), alloc>>20)
	}
	m := newIFileMeta()
	z := zlibBytes(nil)
	var content []byte
	var files []func()
	for i := range 20000 {
		start := int64(32 + len(content))
		content = append(content, z...)
		files = append(files, func() { m.file(fmt.Sprint("f", i), 0, start, int64(len(z))) })
	}
	m.meta("gz", func() { m.cycle(map[string][]func(){"container_1_0001_01_000001": files}) })
	data := buildIFile(content, m.w.Bytes())
	var err error
	var n int
	alloc := measured(t, func() { _, n, err = readAsCommand(data, 3) })
	if err != nil || n != len(files) {
		t.Fatalf("IFile: %d files, %v", n, err)
	}
	// This file is mostly its index: a Java-serialized entry per log file, decoded into a name, an
	// offset and a length, which costs about 1.2 KB a file (33 bytes per byte of the file without
	// -race, Go 1.26). So the IFile's bound is per log file, 2 KiB, besides 32 bytes per byte: a
	// fresh 64 KiB inflate state per log file would still be 30 times over it.
	if limit := raceAllocFactor * (32*uint64(len(data)) + 2048*uint64(n)); alloc > limit {
		t.Errorf("IFile: reading %d log files (%d bytes) allocated %d bytes, more than %d", n, len(data), alloc, limit)
	}
	t.Logf("IFile: %d bytes, %d log files: %d MB allocated", len(data), n, alloc>>20)
}

// TestSizesMustMatchTheIndex: a block or log file that holds more than its index says is an error,
// not a log cut short in silence (before, the records past a TFile block's indexed size and the
// bytes past an IFile log file's length were dropped without a word).
func TestSizesMustMatchTheIndex(t *testing.T) {
	two := append(tRecord("container_1_0001_01_000001", tContainer([2]string{"stdout", "one\n"})),
		tRecord("container_1_0001_01_000002", tContainer([2]string{"stdout", "two\n"}))...)
	first := len(tRecord("container_1_0001_01_000001", tContainer([2]string{"stdout", "one\n"})))
	for _, codec := range []string{"none", "gz"} {
		stored := two
		if codec == "gz" {
			stored = zlibBytes(two)
		}
		idx := append(tString(codec), tVLong(1)...)
		idx = append(idx, tVLong(16)...)
		idx = append(idx, tVLong(int64(len(stored)))...)
		idx = append(idx, tVLong(int64(first))...) // the raw size of the first record only
		data := buildTFile(tfileSpec{codec: "none", pre: stored, index: idx})
		if _, _, err := readAsCommand(data, 0); err == nil || !strings.Contains(err.Error(), "holds more bytes than its index gives") {
			t.Errorf("TFile %s, a block larger than indexed: err = %v", codec, err)
		}
	}
	for _, codec := range []string{"none", "gz"} {
		content := []byte("hello\nand more\n")
		if codec == "gz" {
			content = zlibBytes(content)
		}
		m := newIFileMeta()
		m.meta(codec, func() {
			m.cycle(map[string][]func(){"container_1_0001_01_000001": {func() { m.file("stdout", 6, 32, int64(len(content))) }}})
		})
		if _, _, err := readAsCommand(buildIFile(content, m.w.Bytes()), 0); err == nil || !strings.Contains(err.Error(), "holds more bytes than its index gives") {
			t.Errorf("IFile %s, a log file longer than indexed: err = %v", codec, err)
		}
	}
}
