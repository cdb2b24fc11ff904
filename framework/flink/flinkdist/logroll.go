package flinkdist

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The roll of a job that sets neither [flink] log-max-size nor log-max-files: 64 MiB × 5 bound each
// log of a process to 320 MiB (Flink's own conf/log4j.properties keeps 10 files of 100 MiB).
const (
	DefaultLogMaxSize  = 64 << 20
	DefaultLogMaxFiles = 5
)

// LogRoll is how a process's log files roll (docs/flink.md#logs-that-roll): the log4j file
// (jobmanager.log, taskmanager.log) rolls once it exceeds MaxSize into <file>.<n>, n counting up and
// never reused, and the newest MaxFiles-1 parts are kept beside the file being written.
type LogRoll struct {
	// File is the process's log file (-Dlog.file): its directory is where the parts are counted.
	File string
	// MaxSize is the size in bytes a file rolls at; MaxFiles the files kept, the written one included.
	MaxSize  int64
	MaxFiles int
	// Zero MaxSize and MaxFiles are DefaultLogMaxSize and DefaultLogMaxFiles.
	// Set says the job file set the size or the count: then a home's own conf/log4j.properties, which
	// the keys could not apply to, is refused rather than used.
	Set bool
}

// Log4jProperties returns yarn-am's log4j2 configuration for the roll: everything at INFO into the
// file -Dlog.file names, rolled by size, parts deleted beyond the count.
//
// The parts are numbered up (log4j's "nomax" index) rather than shifted (.1 the newest, every part
// renamed at each roll): YARN's rolling log aggregation uploads the parts and then deletes what it
// uploaded by name, and a part renamed in between would be deleted unread. The count is kept by a
// Delete action over <file>.* that keeps the newest MaxFiles-1 by modification time.
func (l LogRoll) Log4jProperties() (string, error) {
	l = l.withDefaults()
	dir, base := filepath.Dir(l.File), filepath.Base(l.File)
	// The directory and name are written into the configuration: keep out what log4j would read as
	// a lookup (${...}), a file pattern (%), an escape (\) or a line's end.
	for _, s := range []string{dir, base} {
		if strings.ContainsAny(s, "$%\\\n\r*?[]{}") || strings.TrimSpace(s) != s || !filepath.IsAbs(l.File) {
			return "", fmt.Errorf("flink: the log file %s: want an absolute path without $, %%, \\, glob characters, line breaks or surrounding spaces for the log4j configuration", shown(l.File))
		}
	}
	if l.MaxSize <= 0 || l.MaxFiles < 2 {
		return "", fmt.Errorf("flink: rolling logs at %d bytes keeping %d files: want a positive size and at least 2 files", l.MaxSize, l.MaxFiles)
	}
	var b strings.Builder
	b.WriteString("# Written by yarn-am (docs/flink.md#logs-that-roll): everything at INFO into the file -Dlog.file names,\n")
	fmt.Fprintf(&b, "# rolled past %d bytes into <file>.<n> (n counting up), the newest %d parts kept.\n", l.MaxSize, l.MaxFiles-1)
	b.WriteString(`rootLogger.level = INFO
rootLogger.appenderRef.main.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = RollingFile
appender.main.fileName = ${sys:log.file}
appender.main.filePattern = ${sys:log.file}.%i
appender.main.append = true
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %c - %m%n
appender.main.policies.type = Policies
appender.main.policies.size.type = SizeBasedTriggeringPolicy
`)
	fmt.Fprintf(&b, "appender.main.policies.size.size = %d\n", l.MaxSize)
	b.WriteString(`appender.main.strategy.type = DefaultRolloverStrategy
appender.main.strategy.fileIndex = nomax
appender.main.strategy.action.type = Delete
`)
	fmt.Fprintf(&b, "appender.main.strategy.action.basePath = %s\n", dir)
	b.WriteString("appender.main.strategy.action.maxDepth = 1\n")
	b.WriteString("appender.main.strategy.action.condition.type = IfFileName\n")
	fmt.Fprintf(&b, "appender.main.strategy.action.condition.glob = %s.*\n", base)
	b.WriteString("appender.main.strategy.action.condition.nested.type = IfAccumulatedFileCount\n")
	fmt.Fprintf(&b, "appender.main.strategy.action.condition.nested.exceeds = %d\n", l.MaxFiles-1)
	return b.String(), nil
}

// plainLog4j is the configuration of a process whose log directory is not known when its conf
// directory is written (make bench's run of Flink's own YARN mode): one file, not rolled.
const plainLog4j = `# Written by yarn-am (docs/flink.md#logs): everything at INFO into the file -Dlog.file names.
rootLogger.level = INFO
rootLogger.appenderRef.main.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.fileName = ${sys:log.file}
appender.main.append = true
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %c - %m%n
`

// withDefaults fills a zero size and count with the defaults.
func (l LogRoll) withDefaults() LogRoll {
	if l.MaxSize == 0 {
		l.MaxSize = DefaultLogMaxSize
	}
	if l.MaxFiles == 0 {
		l.MaxFiles = DefaultLogMaxFiles
	}
	return l
}
