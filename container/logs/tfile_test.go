package logs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// oracleLogs parses the output of Hadoop's own `yarn logs -applicationId` (LogsCLI) into
// "container/file" -> content, using the LogLength it prints to cut the content exactly.
func oracleLogs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	head := regexp.MustCompile(`(?m)^Container: (\S+) on (\S+)\nLogAggregationType: \S+\n=+\nLogType:(.*)\nLogLastModifiedTime:.*\nLogLength:(\d+)\nLogContents:\n`)
	for _, m := range head.FindAllSubmatchIndex(data, -1) {
		n, _ := strconv.Atoi(string(data[m[8]:m[9]]))
		key := string(data[m[2]:m[3]]) + "/" + string(data[m[6]:m[7]])
		out[key] = string(data[m[1] : m[1]+n])
	}
	if len(out) == 0 {
		t.Fatalf("%s: no log found in Hadoop's output", path)
	}
	return out
}

type walker interface {
	Walk(func(LogFile, io.Reader) error) error
	AppOwner() string
}

func openTFile(r io.ReaderAt, size int64) (walker, error) {
	tf, err := OpenTFile(r, size)
	if err != nil {
		return nil, err
	}
	return tf, nil
}

func openIFile(r io.ReaderAt, size int64) (walker, error) {
	f, err := OpenIFile(r, size)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func readDir(t *testing.T, dir string, open func(io.ReaderAt, int64) (walker, error)) map[string]string {
	t.Helper()
	got := map[string]string{}
	names, _ := filepath.Glob(filepath.Join(dir, "127.0.0.*"))
	if len(names) == 0 {
		t.Fatalf("no aggregated files in %s", dir)
	}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		w, err := open(f, st.Size())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err = w.Walk(func(lf LogFile, r io.Reader) error {
			b, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			if int64(len(b)) != lf.Length {
				return fmt.Errorf("%s/%s: %d bytes, header says %d", lf.Container, lf.Name, len(b), lf.Length)
			}
			got[lf.Container+"/"+lf.Name] = string(b)
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if owner := w.AppOwner(); owner != "root" {
			t.Errorf("%s: owner %q, want root", name, owner)
		}
	}
	return got
}

// TestTFileMatchesHadoopLogsCLI reads the aggregated files a real Hadoop 3.4.3 NodeManager wrote for
// the gpu-demo job (testdata/tfile-3.4, copied from the mini cluster's HDFS) and compares every
// container's every log file with what Hadoop's own `yarn logs` printed for the same application.
func TestTFileMatchesHadoopLogsCLI(t *testing.T) {
	compareWithHadoop(t, "testdata/tfile-3.4", openTFile)
}

// TestIFileMatchesHadoopLogsCLI does the same for the indexed format (IFile), gz-compressed, as a
// Hadoop 3.4.3 NodeManager wrote it with yarn.log-aggregation.file-formats=IFile and
// yarn.nodemanager.log-aggregation.compression-type=gz (testdata/ifile-3.4).
func TestIFileMatchesHadoopLogsCLI(t *testing.T) {
	compareWithHadoop(t, "testdata/ifile-3.4", openIFile)
}

func compareWithHadoop(t *testing.T, dir string, open func(io.ReaderAt, int64) (walker, error)) {
	want := oracleLogs(t, filepath.Join(dir, "yarn-logs.txt"))
	got := readDir(t, dir, open)
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: our reader and Hadoop's yarn logs differ:\nours:   %.200q\nhadoop: %.200q", k, got[k], want[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("we read %d container log files, Hadoop's yarn logs printed %d", len(got), len(want))
	}
	var gpuLines int
	for k, v := range got {
		if strings.HasSuffix(k, "/stdout") && strings.Contains(v, "gpu indexes from file=") {
			gpuLines++
		}
	}
	if gpuLines != 2 {
		t.Errorf("%d TaskExecutor stdouts with the worker's GPU line, want 2", gpuLines)
	}
}

func TestTFileRejectsOtherFiles(t *testing.T) {
	data, err := os.ReadFile("testdata/tfile-3.4/127.0.0.2_44197")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"text":      []byte(strings.Repeat("not a log file\n", 10)),
		"truncated": data[:len(data)-3],
	} {
		if _, err := OpenTFile(bytes.NewReader(b), int64(len(b))); err != ErrNotTFile {
			t.Errorf("%s: err = %v, want ErrNotTFile", name, err)
		}
	}
	// A damaged meta index offset is reported, not followed.
	bad := append([]byte(nil), data...)
	copy(bad[len(bad)-28:], []byte{0x7f, 0, 0, 0, 0, 0, 0, 0})
	if _, err := OpenTFile(bytes.NewReader(bad), int64(len(bad))); err == nil || !strings.Contains(err.Error(), "outside the file") {
		t.Errorf("damaged trailer: err = %v", err)
	}
	// A cut data block is an error from Walk, never a silent short log.
	cut := append([]byte(nil), data...)
	tf, err := OpenTFile(bytes.NewReader(cut), int64(len(cut)))
	if err != nil {
		t.Fatal(err)
	}
	tf.blocks[0].raw -= 100
	tf.blocks[0].stored -= 100
	if err := tf.Walk(func(LogFile, io.Reader) error { return nil }); err == nil {
		t.Error("Walk over a cut data block: no error")
	}
}

// TestVLong checks the decoder against encodings worked out from Hadoop's TFile Utils.writeVLong
// rules (one byte for -32..127; 0xa8.. prefixes for 2 and 3 bytes; length-coded beyond).
func TestVLong(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want int64
	}{
		{[]byte{0x00}, 0},
		{[]byte{0x7f}, 127},
		{[]byte{0xe0}, -32},
		{[]byte{0xcc, 0x80}, 128},        // (0xcc=-52 +52)<<8 | 0x80
		{[]byte{0xa8, 0x1e, 0xf3}, 7923}, // a real chunk length from the fixture
		{[]byte{0xa8, 0x1f, 0x5c}, 8028},
		{[]byte{0x90, 0x10, 0x00, 0x00}, 1 << 20},       // 3 bytes follow (0x90)
		{[]byte{0x83, 0x00, 0x10, 0x00, 0x00}, 1 << 20}, // length-coded: 0x83 = 4 bytes follow
		{[]byte{0x84, 0x01, 0x00, 0x00, 0x00, 0x00}, 1 << 32},
		{[]byte{0x83, 0xff, 0xff, 0xff, 0xfe}, -2}, // sign-extended
	} {
		got, err := readVLong(bytes.NewReader(c.in))
		if err != nil || got != c.want {
			t.Errorf("readVLong(% x) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if _, err := readVLong(bytes.NewReader([]byte{0xa8, 0x1e})); err != io.ErrUnexpectedEOF {
		t.Errorf("short vlong: err = %v, want unexpected EOF", err)
	}
}

func TestModifiedUTF8(t *testing.T) {
	// "a\x00é😀" as Java's writeUTF encodes it: NUL as C0 80, the emoji as two 3-byte surrogates.
	in := []byte{'a', 0xc0, 0x80, 0xc3, 0xa9, 0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80}
	got, err := decodeModifiedUTF8(in)
	if err != nil || got != "a\x00é😀" {
		t.Errorf("decodeModifiedUTF8 = %q, %v", got, err)
	}
}

// readerAtOnly hides Seek: the reader then goes through ReadAt sections instead of seeking.
type readerAtOnly struct{ r io.ReaderAt }

func (r readerAtOnly) ReadAt(p []byte, off int64) (int, error) { return r.r.ReadAt(p, off) }

func TestReadAtAndSeekPathsAgree(t *testing.T) {
	for _, c := range []struct {
		file string
		open func(io.ReaderAt, int64) (walker, error)
	}{{"testdata/tfile-3.4/127.0.0.3_44319", openTFile}, {"testdata/ifile-3.4/127.0.0.2_37029", openIFile}} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		var outs [2]string
		for i, r := range []io.ReaderAt{bytes.NewReader(data), readerAtOnly{bytes.NewReader(data)}} {
			w, err := c.open(r, int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := w.Walk(func(lf LogFile, r io.Reader) error {
				fmt.Fprintf(&b, "%s/%s:", lf.Container, lf.Name)
				_, err := io.Copy(&b, r)
				return err
			}); err != nil {
				t.Fatalf("%s (path %d): %v", c.file, i, err)
			}
			outs[i] = b.String()
		}
		if outs[0] != outs[1] || len(outs[0]) < 1000 {
			t.Errorf("%s: the seek and ReadAt paths differ (%d vs %d bytes)", c.file, len(outs[0]), len(outs[1]))
		}
	}
}
