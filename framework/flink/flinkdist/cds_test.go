package flinkdist

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeJDK is a JDK's layout: bin/java, release and lib/modules.
func fakeJDK(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"bin", "lib"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	java := filepath.Join(dir, "bin", "java")
	for p, body := range map[string]string{
		java:                              "#!/bin/sh\n",
		filepath.Join(dir, "release"):     "IMPLEMENTOR=\"Test\"\nJAVA_VERSION=\"" + version + "\"\n",
		filepath.Join(dir, "lib/modules"): "modules",
	} {
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return java
}

// The archive's name changes with everything the JVM compares before it maps an archive: another
// JDK build, a lib/ jar of another size or modification time; and it is the same for the same home
// and JDK, wherever they are (the home of every container of a run is unpacked from one archive).
func TestArchiveNameFollowsTheHomeAndTheJDK(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	java := fakeJDK(t, "17.0.15")
	name, err := ArchiveName(h, java, RoleApplication)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "flink-1.20.5-jdk17.0.15-jobmanager-") || !strings.HasSuffix(name, ".jsa") {
		t.Errorf("name %s", name)
	}
	again, _ := ArchiveName(h, java, RoleSession)
	if again != name {
		t.Errorf("both JobManager roles share one archive: %s, %s", name, again)
	}
	tm, _ := ArchiveName(h, java, RoleTaskManager)
	if tm == name || !strings.Contains(tm, "-taskmanager-") {
		t.Errorf("the TaskManager's archive %s is its own (the JobManager's is %s)", tm, name)
	}

	// The same JDK at another place is another identity (the JVM records its own path), and so is
	// another version.
	if other, _ := ArchiveName(h, fakeJDK(t, "17.0.15"), RoleApplication); other == name {
		t.Errorf("another JDK directory gave the same name %s", name)
	}
	if other, _ := ArchiveName(h, fakeJDK(t, "21.0.2"), RoleApplication); !strings.Contains(other, "-jdk21.0.2-") {
		t.Errorf("another JDK version: %s", other)
	}

	// A jar touched (same bytes, another modification time) is refused by the JVM: another name.
	jar := h.LibJars[0]
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(jar, later, later); err != nil {
		t.Fatal(err)
	}
	if touched, _ := ArchiveName(h, java, RoleApplication); touched == name {
		t.Errorf("a touched jar kept the name %s", name)
	}

	if _, err := ArchiveName(h, filepath.Join(t.TempDir(), "java"), RoleApplication); err == nil || !strings.Contains(err.Error(), "java binary") {
		t.Errorf("a missing java: %v", err)
	}
	noRelease := fakeJDK(t, "17")
	os.Remove(filepath.Join(filepath.Dir(filepath.Dir(noRelease)), "release"))
	if _, err := ArchiveName(h, noRelease, RoleApplication); err == nil || !strings.Contains(err.Error(), "release") {
		t.Errorf("a JDK without its release file: %v", err)
	}
}

// An archive is used only when its content hashes to the SHA-256 recorded when it was made: the JVM
// maps a changed archive as it is and crashes on a truncated one (cds.go).
func TestVerifyArchiveRefusesATamperedArchive(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "jm.jsa")
	content := []byte(strings.Repeat("archived classes ", 1000))
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(content)
	want := hex.EncodeToString(s[:])
	if got, err := ArchiveSum(p); err != nil || got != want {
		t.Fatalf("ArchiveSum = %s, %v; want %s", got, err, want)
	}
	if err := VerifyArchive(p, want); err != nil {
		t.Errorf("the archive as made: %v", err)
	}
	for name, change := range map[string]func([]byte) []byte{
		"one byte flipped": func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b },
		"truncated":        func(b []byte) []byte { return b[:len(b)/2] },
		"grown":            func(b []byte) []byte { return append(b, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(p, change(append([]byte(nil), content...)), 0o644); err != nil {
				t.Fatal(err)
			}
			err := VerifyArchive(p, want)
			if !errors.Is(err, errArchiveMismatch) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "refused") {
				t.Errorf("a tampered archive: %v", err)
			}
		})
	}
	if err := VerifyArchive(filepath.Join(dir, "missing.jsa"), want); err == nil {
		t.Error("a missing archive verified")
	}
	if err := VerifyArchive(dir, want); err == nil || !strings.Contains(err.Error(), "regular") {
		t.Errorf("a directory: %v", err)
	}
}

// With class-data sharing the JVM gets the archive's flag before the configured options, and the class
// path names the home's jars relative to the working directory (the same in every container), then
// the user's jars, which the archive does not record.
func TestBuildPassesTheArchiveFlags(t *testing.T) {
	h := fakeHome(t, "a: b\n")
	conf := NewConfig()
	conf.Set(KeyJavaOptsAll, "-Dall=1")
	params := ResourceParams{JVM: []string{"-Xmx1"}}
	work := filepath.Dir(h.Dir)
	s := Spec{Home: h, Java: "/jdk/bin/java", Dir: work, LogDir: "/logs", UserJars: []string{filepath.Join(work, "job.jar")}}
	home := filepath.Base(h.Dir)
	wantCP := strings.Join([]string{home + "/lib/flink-cep-1.20.5.jar", home + "/lib/log4j-core-2.24.3.jar",
		home + "/lib/flink-dist-1.20.5.jar", filepath.Join(work, "job.jar")}, ":")
	for _, tc := range []struct {
		cds   CDS
		flags string
	}{
		{CDS{Use: "/w/jm.jsa"}, "-XX:SharedArchiveFile=/w/jm.jsa -Xshare:auto"},
		{CDS{ClassList: "/w/classes.lst"}, "-XX:DumpLoadedClassList=/w/classes.lst"},
		{CDS{ClassList: "/w/classes.lst", LoadLog: "/w/loaded.log"}, "-XX:DumpLoadedClassList=/w/classes.lst -Xlog:class+load=info:file=/w/loaded.log:none:filecount=1,filesize=16m"},
		{CDS{ClassList: "/w/classes.lst", LoadLog: "/w:x/loaded.log"}, "-XX:DumpLoadedClassList=/w/classes.lst"},
	} {
		s.CDS = tc.cds
		p, err := buildCommand(RoleApplication, s, conf, "/w/conf", params)
		if err != nil {
			t.Fatal(err)
		}
		argv := strings.Join(p.Argv, " ")
		if !strings.HasPrefix(argv, "/jdk/bin/java -Xmx1 "+tc.flags+" -Dall=1 ") || !strings.Contains(argv, " -classpath "+wantCP+" ") {
			t.Errorf("argv %s\nwant the flags %s and the class path %s", argv, tc.flags, wantCP)
		}
	}
	s.CDS = CDS{}
	p, err := buildCommand(RoleApplication, s, conf, "/w/conf", params)
	if err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(p.Argv, " "); strings.Contains(argv, "-XX:") || !strings.Contains(argv, h.Classpath(s.UserJars)) {
		t.Errorf("without class-data sharing: %s", argv)
	}
	s.CDS, s.Dir = CDS{Use: "/w/jm.jsa"}, t.TempDir()
	if _, err := buildCommand(RoleApplication, s, conf, "/w/conf", params); err == nil || !strings.Contains(err.Error(), "not below the working directory") {
		t.Errorf("a home outside the working directory: %v", err)
	}
}

func TestCDSSupportedFromJDK13(t *testing.T) {
	for v, want := range map[string]bool{"17.0.15": true, "13": true, "21.0.2": true, "25.0.3": true, "11.0.22": false, "1.8.0_402": false, "": false, "x": false} {
		if got := CDSSupported(v); got != want {
			t.Errorf("CDSSupported(%q) = %v, want %v", v, got, want)
		}
	}
}
