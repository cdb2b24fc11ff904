package flink

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/text"
)

// A job's main class that the jar does not hold fails the JobManager only after the job is staged,
// the containers are allocated and the JVM has started (ClassNotFoundException); a jar whose manifest
// names no Main-Class, with flink.main-class unset, leaves Flink to look for one in the other jars of
// its classpath. The client looks into the jar (a zip) before anything is staged
// (docs/flink.md#what-check-refuses).

// maxManifest bounds the manifest read of a job's jar (a real one is a few hundred bytes).
const maxManifest = 64 << 10

// checkJar refuses a flink.main-class the job's jar does not contain, and an unset main-class with a
// jar whose manifest names no Main-Class (or one the jar does not contain).
func checkJar(f *flinkSpec) error {
	file, err := boundedread.OpenRegular(f.Jar)
	if err != nil {
		return fmt.Errorf("flink.jar = %q: %v", bounded(f.Jar), err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fmt.Errorf("flink.jar = %q: %v", bounded(f.Jar), err)
	}
	zr, err := zip.NewReader(file, st.Size())
	if err != nil {
		return fmt.Errorf("flink.jar = %q: not a jar (a zip archive of the job's classes): %v", bounded(f.Jar), err)
	}
	classes := map[string]bool{}
	var manifest *zip.File
	for _, e := range zr.File {
		switch {
		case strings.HasSuffix(e.Name, ".class"):
			classes[strings.TrimSuffix(e.Name, ".class")] = true
		case strings.EqualFold(e.Name, "META-INF/MANIFEST.MF"):
			manifest = e
		}
	}
	main, where := f.MainClass, "flink.main-class = "+text.Quote(f.MainClass)
	if main == "" {
		if main, err = manifestMainClass(manifest); err != nil {
			return fmt.Errorf("flink.jar = %q: %v", bounded(f.Jar), err)
		}
		if main == "" {
			return fmt.Errorf("flink.main-class is not set and the manifest of flink.jar = %q names no Main-Class: set flink.main-class to the class whose main builds the job (else Flink looks for a Main-Class in the other jars of its classpath)", bounded(f.Jar))
		}
		where = fmt.Sprintf("flink.main-class is not set and the manifest of flink.jar names Main-Class %s", text.Quote(main))
	}
	entry := strings.ReplaceAll(main, ".", "/")
	if classes[entry] {
		return nil
	}
	return fmt.Errorf("%s: flink.jar = %q has no %s.class%s; the JobManager would fail with ClassNotFoundException. Give the fully qualified name of the class whose main builds the job",
		where, bounded(f.Jar), text.Cut(entry, 200), text.DidYouMean(main, nearClasses(entry, classes)))
}

// nearClasses are the candidates of a did-you-mean for a missing class: the jar's classes of the same
// package or the same simple name (a jar may hold tens of thousands; these are few), dotted.
func nearClasses(entry string, classes map[string]bool) []string {
	dir, base := path.Split(entry)
	var out []string
	for c := range classes {
		if cd, cb := path.Split(c); cd == dir || strings.EqualFold(cb, base) {
			out = append(out, strings.ReplaceAll(c, "/", "."))
		}
	}
	return out
}

// manifestMainClass reads the Main-Class attribute of a jar's manifest (its main section), "" when
// there is no manifest or no such attribute. Continuation lines (a leading space) are joined, as the
// JAR file specification wraps lines at 72 bytes.
func manifestMainClass(m *zip.File) (string, error) {
	if m == nil {
		return "", nil
	}
	rc, err := m.Open()
	if err != nil {
		return "", fmt.Errorf("its manifest: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxManifest+1))
	if err != nil {
		return "", fmt.Errorf("its manifest: %v", err)
	}
	if len(b) > maxManifest {
		return "", fmt.Errorf("its manifest is larger than %d KiB", maxManifest>>10)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 0, 4096), maxManifest+1)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			break // the end of the main section
		}
		if strings.HasPrefix(line, " ") && len(lines) > 0 {
			lines[len(lines)-1] += line[1:]
			continue
		}
		lines = append(lines, line)
	}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Main-Class") {
			return strings.TrimSpace(v), nil
		}
	}
	return "", nil
}

// jarMainClass is the Main-Class of the jar's manifest ("" when it names none). The JobManager
// passes it to Flink as the job's class when flink.main-class is unset: without one, Flink looks for
// a Main-Class in every jar of its classpath, and the Hadoop classpath holds jars with one of their
// own (hadoop-mapreduce-client-jobclient), which Flink refuses as ambiguous.
func jarMainClass(jar string) (string, error) {
	file, err := boundedread.OpenRegular(jar)
	if err != nil {
		return "", err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return "", err
	}
	zr, err := zip.NewReader(file, st.Size())
	if err != nil {
		return "", fmt.Errorf("%s: not a jar: %v", jar, err)
	}
	for _, e := range zr.File {
		if strings.EqualFold(e.Name, "META-INF/MANIFEST.MF") {
			return manifestMainClass(e)
		}
	}
	return "", nil
}
