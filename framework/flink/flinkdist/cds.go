package flinkdist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// Class-data sharing (docs/flink.md#class-data-sharing): a CDS archive holds the classes a Flink
// process loads, already parsed and verified, so the next JVM maps them instead of reading them from
// the jars: the JobManager's start measured 2.1 s instead of 3.8 s on this project's 2-core machine
// (docs/performance.md#then-class-data-sharing). The archive is a static one (-Xshare:dump with
// -XX:SharedClassListFile, mapped with -XX:SharedArchiveFile), made from the list of the classes a
// whole JobManager's life loaded (-XX:DumpLoadedClassList): its job's submission and scheduling
// included, which a JobManager stopped at its start never loads
// (docs/performance.md#the-whole-jobmanager-in-the-archive-2026-11-30).
//
// What the JVM checks and what it does not (measured with JDK 17.0.15 and 25.0.3):
//   - It compares the archive's class path with its own, entry by entry: the names as given on the
//     command line and each jar's size and modification time. A jar changed (or only touched) since
//     the dump, or another class path, makes it refuse the archive with a warning and start without
//     it. Relative names make one archive fit every container of a home unpacked from the same
//     archive (the same names below the working directory, the same times from the tar).
//   - Another JDK (17's archive given to 25) is refused with a warning, and the JVM starts.
//   - The content is not checked: a byte changed inside the archive is mapped as it is (code that the
//     JobManager runs), and a truncated archive crashes the JVM (SIGBUS) before main. So an archive
//     is used only after its SHA-256 matched the one recorded when it was made (VerifyArchive).

// MaxArchiveBytes bounds an archive VerifyArchive reads (a JobManager's is 84-89 MiB).
const MaxArchiveBytes = 1 << 30

// CDS says how a process uses class-data sharing. Both empty: not at all.
type CDS struct {
	// Use is a verified archive to map (-XX:SharedArchiveFile).
	Use string
	// ClassList is where the JVM writes the names of the classes it loads, as it loads them
	// (-XX:DumpLoadedClassList), for DumpArgs once it has ended.
	ClassList string
	// LoadLog, with ClassList, is where the JVM logs each class it loads and where from
	// (-Xlog:class+load, no decorations, one 16 MiB file and one rotated): the classes of class
	// loaders of Flink's own, which a class list does not name. Left out when the path holds a
	// character -Xlog reads as a separator.
	LoadLog string
}

// Flags returns the JVM flags of c.
func (c CDS) Flags() []string {
	switch {
	case c.Use != "":
		// auto: an archive the JVM cannot map (another class path) is left out with a warning, the
		// process starts without it.
		return []string{"-XX:SharedArchiveFile=" + c.Use, "-Xshare:auto"}
	case c.ClassList != "":
		flags := []string{"-XX:DumpLoadedClassList=" + c.ClassList}
		if c.LoadLog != "" && !strings.ContainsAny(c.LoadLog, ":,=\" \t\n") {
			flags = append(flags, "-Xlog:class+load=info:file="+c.LoadLog+":none:filecount=1,filesize=16m")
		}
		return flags
	}
	return nil
}

// On reports whether c asks for an archive or a class list at all.
func (c CDS) On() bool { return c.Use != "" || c.ClassList != "" }

// DumpArgs is the command line of the JVM java that writes the archive archive of the classes named
// in classList (a list as -XX:DumpLoadedClassList writes it, or less) found on classpath (the home's
// jars as SharedClasspath gives them, relative to the JVM's working directory), and exits.
func DumpArgs(java, classList, archive, classpath string) []string {
	return []string{java, "-Xshare:dump", "-XX:SharedClassListFile=" + classList, "-XX:SharedArchiveFile=" + archive, "-classpath", classpath}
}

// SharedClasspath is the class path of a process that uses or writes an archive: the home's jars
// relative to base (the process's working directory, where the home is localised), flink-dist last
// among them, then the user's jars. The archive records the home's jars only; the user's come after
// them because the JVM accepts a class path that extends the archive's, and a job's jar differs from
// job to job (and in modification time from container to container).
func (h *Home) SharedClasspath(base string, userJars []string) (string, error) {
	parts := make([]string, 0, len(h.LibJars)+len(userJars))
	for _, j := range h.LibJars {
		rel, err := filepath.Rel(base, j)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("flink: class-data sharing: the home's jar %s is not below the working directory %s", j, base)
		}
		parts = append(parts, rel)
	}
	parts = append(parts, userJars...)
	return strings.Join(parts, string(os.PathListSeparator)), nil
}

// ArchiveName names the archive of a Flink home, a JDK and a role: an archive is made by one JVM
// build for one class path, and any other is refused by the JVM, so the name holds what the JVM
// compares. The home's part hashes each lib/ jar's name, size and modification time; the JDK's the
// java binary's resolved path, its home's release file and the size and time of lib/modules (the
// base archive's classes). Example: flink-1.20.5-jdk17.0.15-jobmanager-3f2a9c0d1e2b4a5f.jsa.
func ArchiveName(h *Home, java string, role Role) (string, error) {
	jdk, version, err := JDKIdentity(java)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "jdk %s\n", jdk)
	for _, j := range h.LibJars {
		st, err := os.Stat(j)
		if err != nil {
			return "", fmt.Errorf("flink: class-data sharing: %w", err)
		}
		fmt.Fprintf(sum, "jar %s %d %d\n", filepath.Base(j), st.Size(), st.ModTime().UnixNano())
	}
	kind := "taskmanager"
	if role != RoleTaskManager {
		kind = "jobmanager"
	}
	return fmt.Sprintf("flink-%s-jdk%s-%s-%s.jsa", safeName(h.Version), safeName(version), kind, hex.EncodeToString(sum.Sum(nil))[:16]), nil
}

// JDKIdentity returns what identifies the JDK of the java binary (its resolved path, its release
// file and lib/modules' size and time, hashed) and its version from the release file.
func JDKIdentity(java string) (id, version string, err error) {
	bin, err := exec.LookPath(java)
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return "", "", fmt.Errorf("flink: class-data sharing: the java binary %s: %w", shown(java), err)
	}
	home := filepath.Dir(filepath.Dir(bin))
	release, err := boundedread.ReadFile("JDK release file", filepath.Join(home, "release"), "the JDK's release file", 64<<10)
	if err != nil {
		return "", "", fmt.Errorf("flink: class-data sharing: %w", err)
	}
	modules, err := os.Stat(filepath.Join(home, "lib", "modules"))
	if err != nil {
		return "", "", fmt.Errorf("flink: class-data sharing: the JDK %s has no lib/modules (a JDK 9 or later): %w", home, err)
	}
	for _, line := range strings.Split(string(release), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "JAVA_VERSION="); ok {
			version = strings.Trim(v, `"`)
		}
	}
	if version == "" {
		return "", "", fmt.Errorf("flink: class-data sharing: the JDK's release file %s names no JAVA_VERSION", filepath.Join(home, "release"))
	}
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\n%s\nmodules %d %d\n", bin, release, modules.Size(), modules.ModTime().UnixNano())
	return hex.EncodeToString(sum.Sum(nil)), version, nil
}

// CDSSupported reports whether yarn-am makes and maps archives on a JDK of version (its release
// file's JAVA_VERSION: "17.0.15", "11.0.2", "1.8.0_402"): JDK 13 and later, the JDKs it was measured
// with (17 and 25); OpenJDK 8 has no application class-data sharing, and 11's is not tested.
func CDSSupported(version string) bool {
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 13
}

// safeName keeps letters, digits, '.' and '_' of s (a version in a file name).
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '-'
	}, s)
}

// errArchiveMismatch is the error of an archive whose content is not the one recorded.
var errArchiveMismatch = errors.New("the archive's SHA-256 is not the one recorded when it was made")

// ArchiveSum returns the SHA-256 (hex) of the archive at path, a regular file of at most
// MaxArchiveBytes.
func ArchiveSum(path string) (string, error) {
	f, err := boundedread.OpenRegular(path)
	if err != nil {
		return "", fmt.Errorf("flink: class-data sharing: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxArchiveBytes+1))
	if err != nil {
		return "", fmt.Errorf("flink: class-data sharing: reading %s: %w", path, err)
	}
	if n > MaxArchiveBytes {
		return "", fmt.Errorf("flink: class-data sharing: %s is larger than %d bytes", path, int64(MaxArchiveBytes))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyArchive checks that the archive at path hashes to want (hex SHA-256), as recorded when it
// was made. The JVM maps an archive without checking its content (a changed byte runs as it is, a
// truncated archive crashes the JVM), so a process is given one only after this.
func VerifyArchive(path, want string) error {
	got, err := ArchiveSum(path)
	if err != nil {
		return err
	}
	if !strings.EqualFold(got, want) {
		return fmt.Errorf("flink: class-data sharing: %s: %w (recorded %s, found %s); refused, the process starts without it", path, errArchiveMismatch, shown(want), got)
	}
	return nil
}
