package flinkdist

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/stderrtail"
	"github.com/yarn-am/yarn-am/internal/text"
)

// A Flink process that fails before its job runs (a main class that is not there, a file system
// scheme Flink cannot load, a bad key) says why only in its own log: its REST API is gone or never
// answered. This file reads that reason back, bounded, for the driver's last error
// (docs/flink.md#when-the-jobmanager-fails-to-start).

// Bounds of what is read and shown of a failed process's output.
const (
	// maxLogTail is how much of the end of a process's log lastLoggedException reads.
	maxLogTail = 1 << 20
	// maxLogLine is the longest log line kept (a longer one is cut).
	maxLogLine = 64 << 10
	// maxExceptionShown bounds each exception line shown, and maxFailureShown the whole text.
	maxExceptionShown = 400
	maxFailureShown   = 2 << 10
	// stderrLinesShown is how many lines of the JVM's stderr a failure shows.
	stderrLinesShown = 5
)

// logLineStart is the start of a log4j line in Flink's layouts ("2024-01-02 03:04:05,678 ERROR ...").
var logLineStart = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}`)

// exceptionHead is the first line of a Java stack trace: a qualified class name, then ": message" or
// nothing.
var exceptionHead = regexp.MustCompile(`^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+(: |$)`)

// Exception is one Java exception of a log: its first line and the "Caused by:" lines of its stack
// trace, outermost first, without the prefix.
type Exception struct {
	Head   string
	Causes []string
	// AfterError: the log line before it was at ERROR level (not a WARN's or INFO's trace).
	AfterError bool
}

// String is the exception in one line: its head, then its two innermost causes (the innermost says
// what was missing, the one before it often what needed it), each cut to a bounded length.
func (e *Exception) String() string {
	parts := []string{clean(e.Head, maxExceptionShown)}
	causes := e.Causes
	if len(causes) > 2 {
		causes = causes[len(causes)-2:]
	}
	for _, c := range causes {
		if c == e.Head {
			continue
		}
		parts = append(parts, "caused by "+clean(c, maxExceptionShown))
	}
	return strings.Join(parts, "; ")
}

// lastLoggedException returns the last exception logged in the log file at path, read from its last
// maxLogTail bytes (regular files only): the last one logged at ERROR, else the last one of any level;
// nil when there is none or the file cannot be read.
func lastLoggedException(path string) *Exception { return lastExceptionBefore(path, -1) }

// lastExceptionBefore is lastLoggedException of the log's first end bytes (end < 0: all of it): what the
// process had logged by then, without what it logged later.
func lastExceptionBefore(path string, end int64) *Exception {
	f, err := boundedread.OpenRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	if end < 0 || end > st.Size() {
		end = st.Size()
	}
	cut := end > maxLogTail
	if cut {
		if _, err := f.Seek(end-maxLogTail, io.SeekStart); err != nil {
			return nil
		}
	}
	return lastException(io.LimitReader(f, min(end, maxLogTail)), cut)
}

// logSize is the size of the log at path now (-1 when it cannot be read): where a later
// lastExceptionBefore stops.
func logSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// lastException parses a log's text; cut: r starts inside a line, which is skipped.
func lastException(r io.Reader, cut bool) *Exception {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLogLine)
	sc.Split(scanLinesCut)
	var last, lastError, cur *Exception
	prevError, inTrace := false, false
	first := true
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if first && cut {
			first = false
			continue
		}
		first = false
		switch {
		case logLineStart.MatchString(line):
			if cur != nil {
				last = cur
				if cur.AfterError {
					lastError = cur
				}
			}
			cur, inTrace = nil, false
			prevError = strings.Contains(line, " ERROR ")
		case cur == nil && !inTrace && exceptionHead.MatchString(line):
			cur, inTrace = &Exception{Head: strings.TrimSpace(line), AfterError: prevError}, true
		case cur != nil:
			if c, ok := strings.CutPrefix(strings.TrimSpace(line), "Caused by: "); ok {
				cur.Causes = append(cur.Causes, c)
			}
		}
	}
	if cur != nil {
		last = cur
		if cur.AfterError {
			lastError = cur
		}
	}
	if lastError != nil {
		return lastError
	}
	return last
}

// scanLinesCut is bufio.ScanLines, except that a line longer than the buffer is cut to it rather
// than ending the scan: a log may hold one huge line, and the lines after it still count.
func scanLinesCut(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if len(data) >= maxLogLine {
		return len(data), data, nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// jvmNotices start the lines every JVM prints to stderr whatever happens: the JDK's warnings (Flink's
// security manager gets some), the options it picked up from the environment, and SLF4J's notice of
// several bindings (the Hadoop classpath's slf4j-reload4j beside Flink's log4j-slf4j-impl,
// docs/flink.md#hdfs-checkpoints-and-savepoints).
var jvmNotices = []string{"WARNING: ", "NOTE: Picked up ", "Picked up ", "SLF4J: "}

// StderrLines is what a JVM's stderr says, for a failure: its last lines without the JVM's notices
// (jvmNotices), "" when none is left.
func StderrLines(t *stderrtail.Tail) string {
	var keep []string
	for _, l := range strings.Split(t.Lines(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.ContainsFunc(jvmNotices, func(p string) bool { return strings.HasPrefix(l, p) }) {
			keep = append(keep, l)
		}
	}
	if len(keep) > stderrLinesShown {
		keep = keep[len(keep)-stderrLinesShown:]
	}
	return strings.Join(keep, " | ")
}

// Failure words why the process failed, from its log's last exception and what its JVM's stderr
// said (StderrLines of it; "" = nothing): "; jobmanager.log: <exception>; jobmanager.err: <lines>",
// each part only when there is something to say, bounded; "" when neither says anything.
func (p *Process) Failure(stderr string) string {
	var b strings.Builder
	log := filepath.Base(p.LogFile)
	if e := lastLoggedException(p.LogFile); e != nil {
		b.WriteString("; " + log + ": " + e.String())
	}
	if stderr != "" {
		b.WriteString("; " + strings.TrimSuffix(log, ".log") + ".err: " + clean(stderr, maxExceptionShown))
	}
	return clean(b.String(), maxFailureShown)
}

// clean makes a line of another process's output fit a message: valid UTF-8, no control characters,
// at most n bytes ("..." marks a cut).
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) > n {
		return text.Cut(s, n) + "..."
	}
	return s
}
