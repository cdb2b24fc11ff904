package logs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/container/client"
)

// FS is the read side of the filesystem holding the aggregated logs (HDFS in production, a
// directory in unit tests).
type FS interface {
	ReadDir(dir string) ([]os.FileInfo, error)
	Open(name string) (ReadAtCloser, error)
}

// ReadAtCloser is an open file.
type ReadAtCloser interface {
	io.ReaderAt
	io.Closer
}

// Filter selects what to print.
type Filter struct {
	Container string // one container id; "" = every container
	AM        bool   // only the ApplicationMaster's container(s) (container number 1 of each attempt)
	File      string // one log file name (stdout, stderr, ...); "" = every file
	Tail      int    // print only the last Tail lines of each file; 0 = all
}

// Wants reports whether the container passes the filter.
func (f Filter) Wants(container string) bool {
	if f.Container != "" && container != f.Container {
		return false
	}
	if f.AM && !IsAMContainer(container) {
		return false
	}
	return true
}

// WantsFile reports whether the log file passes the filter.
func (f Filter) WantsFile(name string) bool { return f.File == "" || f.File == name }

// IsAMContainer reports whether id is the first container of an attempt, the one YARN runs the
// ApplicationMaster in (container_..._<attempt>_000001; the epoch, if any, lives above bit 40).
func IsAMContainer(id string) bool {
	i := strings.LastIndexByte(id, '_')
	if i < 0 {
		return false
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	return err == nil && n&(1<<40-1) == 1
}

// Printer writes log files with a header each.
type Printer struct {
	W    io.Writer
	Tail int
	// Mark, when set, is added to each header's parenthesis ("rolled, aggregated": a part the
	// NodeManagers uploaded while the application runs).
	Mark string
	// printed holds container/file of every header written, so that a file printed from one source
	// is not printed again from another (Printed).
	printed map[string]bool
	n       int
	// Reused from file to file: a node file may hold many small log files
	// (TestManySmallBlocksAreCheap).
	buf   []byte
	tailR *bufio.Reader
}

// Header starts a log file: "==> container_… on host:port: stdout (63 bytes) <==". The names come
// from the file (or a NodeManager) and so from the application's owner: they are printed through
// client.Sanitize, which removes terminal control sequences (TestPrintedNamesCannotDriveTheTerminal).
func (p *Printer) Header(container, node, file string, size int64) {
	if p.n > 0 {
		fmt.Fprintln(p.W)
	}
	p.n++
	if p.printed == nil {
		p.printed = map[string]bool{}
	}
	p.printed[container+"/"+file] = true
	mark := ""
	if p.Mark != "" {
		mark = ", " + p.Mark
	}
	fmt.Fprintf(p.W, "==> %s on %s: %s (%d bytes%s) <==\n", client.Sanitize(container), client.Sanitize(node), client.Sanitize(file), size, mark)
}

// Has reports whether the file of that container was printed already.
func (p *Printer) Has(container, file string) bool { return p.printed[container+"/"+file] }

// Content copies a log file's content (its last p.Tail lines if set), ending it with a newline.
func (p *Printer) Content(r io.Reader) error {
	if p.Tail > 0 {
		if p.tailR == nil {
			p.tailR = bufio.NewReaderSize(r, 64<<10)
		} else {
			p.tailR.Reset(r)
		}
		return tailFrom(p.W, p.tailR, p.Tail, maxTailLine, maxTailBytes)
	}
	if p.buf == nil {
		p.buf = make([]byte, 32<<10)
	}
	lw := &lastByteWriter{w: p.W}
	if _, err := io.CopyBuffer(lw, r, p.buf); err != nil {
		return err
	}
	if lw.n > 0 && lw.last != '\n' {
		fmt.Fprintln(p.W)
	}
	return nil
}

// Printed is how many log files were printed.
func (p *Printer) Printed() int { return p.n }

type lastByteWriter struct {
	w    io.Writer
	last byte
	n    int64
}

func (l *lastByteWriter) Write(b []byte) (int, error) {
	n, err := l.w.Write(b)
	if n > 0 {
		l.last = b[n-1]
		l.n += int64(n)
	}
	return n, err
}

// The bounds of --tail's memory (docs/security.md#aggregated-log-files, TestTailIsBounded): a
// line longer than maxTailLine keeps its first maxTailLine bytes and says how much was cut; the
// lines kept hold at most maxTailBytes (each line counted with tailLineCost more for its
// bookkeeping), and when the last N lines need more, the oldest are left out and a line says how
// many.
const (
	maxTailLine  = 64 << 10
	maxTailBytes = 32 << 20
	tailLineCost = 64
)

type tailLine struct {
	b   []byte // the line's first maxTailLine bytes, without its newline
	cut int64  // bytes of the line not kept
}

// tailBounded writes the last n lines of r, holding at most maxBytes of them and maxLine of each
// (and its read buffer): maxTailBytes and maxTailLine, smaller ones in FuzzTail.
func tailBounded(w io.Writer, r io.Reader, n, maxLine, maxBytes int) error {
	return tailFrom(w, bufio.NewReaderSize(r, 64<<10), n, maxLine, maxBytes)
}

func tailFrom(w io.Writer, br *bufio.Reader, n, maxLine, maxBytes int) error {
	var ring []tailLine // a queue: ring[head:] are the lines kept, oldest first
	head, kept, lines := 0, 0, 0
	var cur tailLine
	push := func() {
		lines++
		if len(ring)-head == n {
			kept -= len(ring[head].b) + tailLineCost
			ring[head] = tailLine{}
			head++
		}
		ring = append(ring, cur)
		kept += len(cur.b) + tailLineCost
		for kept > maxBytes && len(ring)-head > 1 {
			kept -= len(ring[head].b) + tailLineCost
			ring[head] = tailLine{}
			head++
		}
		if head > 1024 && head > len(ring)/2 {
			ring = append(ring[:0], ring[head:]...)
			head = 0
		}
		cur = tailLine{}
	}
	for {
		frag, err := br.ReadSlice('\n')
		body := frag
		nl := err == nil // ReadSlice ends a line only at its newline
		if nl {
			body = frag[:len(frag)-1]
		}
		k := min(maxLine-len(cur.b), len(body))
		cur.b = append(cur.b, body[:k]...)
		cur.cut += int64(len(body) - k)
		if err == bufio.ErrBufferFull {
			continue
		}
		if nl || err == io.EOF && (len(cur.b) > 0 || cur.cut > 0) {
			push()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if left := min(n, lines) - (len(ring) - head); left > 0 {
		if _, err := fmt.Fprintf(w, "[yarn-am logs: --tail %d: %d earlier lines left out: the lines kept may hold %d MiB]\n", n, left, maxBytes>>20); err != nil {
			return err
		}
	}
	for _, l := range ring[head:] {
		if _, err := w.Write(l.b); err != nil {
			return err
		}
		if l.cut > 0 {
			if _, err := fmt.Fprintf(w, " [yarn-am logs: line cut: %d more bytes not shown (--tail keeps %d KiB of a line)]", l.cut, maxLine>>10); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return nil
}

// AggResult is what ReadAggregated found.
type AggResult struct {
	Dir        string   // the application's log directory found ("" if none)
	Layout     string   // which Hadoop versions use that directory
	NodeFiles  []string // the node files in it
	Containers []string // every container with logs (before the filter), sorted
	Printed    int      // log files printed
	Tried      []string // directories looked in, in order
	Denied     []string // directories or files we had no permission to read
	Skipped    []string // files not read, with why
	Uploading  []string // <node>.tmp files: an upload in progress, or one that failed
}

// ReadAggregated prints the aggregated logs of the first candidate directory that exists.
func ReadAggregated(fsys FS, cands []Candidate, f Filter, p *Printer) (AggResult, error) {
	var res AggResult
	for _, c := range cands {
		res.Tried = append(res.Tried, c.Dir)
		entries, err := fsys.ReadDir(c.Dir)
		if errors.Is(err, os.ErrPermission) {
			res.Denied = append(res.Denied, c.Dir)
			continue
		}
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("listing %s: %w", c.Dir, err)
		}
		res.Dir, res.Layout = c.Dir, c.Layout
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		seen := map[string]bool{}
		for _, e := range entries {
			name := e.Name()
			if strings.HasSuffix(name, ".tmp") {
				res.Uploading = append(res.Uploading, name)
				continue
			}
			if e.IsDir() || strings.HasSuffix(name, "-checksum") {
				continue
			}
			res.NodeFiles = append(res.NodeFiles, name)
			if err := readNodeFile(fsys, path.Join(c.Dir, name), e.Size(), NodeOfFile(name), f, p, seen); err != nil {
				if errors.Is(err, os.ErrPermission) {
					res.Denied = append(res.Denied, path.Join(c.Dir, name))
					continue
				}
				if errors.Is(err, errWriter) {
					return res, err
				}
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", path.Join(c.Dir, name), err))
			}
		}
		for id := range seen {
			res.Containers = append(res.Containers, id)
		}
		sort.Strings(res.Containers)
		res.Printed = p.Printed()
		return res, nil
	}
	return res, nil
}

// errWriter marks a failure to write the output (a closed pipe), which ends the command.
var errWriter = errors.New("writing the output")

type writerErr struct{ err error }

func (w writerErr) Error() string { return "writing the output: " + w.err.Error() }
func (w writerErr) Is(t error) bool {
	return t == errWriter
}

func readNodeFile(fsys FS, name string, size int64, node string, f Filter, p *Printer, seen map[string]bool) error {
	fh, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer fh.Close()
	var walk func(func(LogFile, io.Reader) error) error
	tf, err := OpenTFile(fh, size)
	switch {
	case err == nil:
		walk = tf.Walk
	case errors.Is(err, ErrNotTFile):
		ifl, ierr := OpenIFile(fh, size)
		if ierr != nil {
			return fmt.Errorf("neither a TFile nor an indexed (IFile) aggregated log: %w", ierr)
		}
		walk = ifl.Walk
	default:
		return err
	}
	return walk(func(lf LogFile, r io.Reader) error {
		seen[lf.Container] = true
		if !f.Wants(lf.Container) || !f.WantsFile(lf.Name) {
			return nil
		}
		p.Header(lf.Container, node, lf.Name, lf.Length)
		if err := p.Content(&readSide{r}); err != nil {
			var re readErr
			if errors.As(err, &re) {
				return re.err
			}
			return writerErr{err}
		}
		return nil
	})
}

// readSide tells read failures (a damaged file) from write failures (the output) in Content.
type readSide struct{ r io.Reader }

type readErr struct{ err error }

func (e readErr) Error() string { return e.err.Error() }

func (s *readSide) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if err != nil && err != io.EOF {
		err = readErr{err}
	}
	return n, err
}
