package flinkdist

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yarn-am/yarn-am/internal/classfile"
)

// The jar opens as a zip with the manifest first, its service files name the two classes (what
// ServiceLoader reads), and both classes parse as version-49 class files whose constants are the
// service name and the two variables the AM sets. The JVM's view of the same jar is
// TestTokenJarServesFlinksTokenFramework (build tag flink).
func TestTokenJarHoldsTheProviderAndTheReceiver(t *testing.T) {
	jar, err := tokenJar()
	if err != nil {
		t.Fatal(err)
	}
	again, err := tokenJar()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(jar, again) {
		t.Error("two calls wrote two different jars: the jar must be the same for the same yarn-am")
	}
	zr, err := zip.NewReader(bytes.NewReader(jar), int64(len(jar)))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if !f.Modified.Equal(tokenJarTime) {
			t.Errorf("%s modified %v, want the fixed %v", f.Name, f.Modified, tokenJarTime)
		}
		names = append(names, f.Name)
		entries[f.Name] = b
	}
	want := []string{
		"META-INF/MANIFEST.MF",
		"META-INF/services/org.apache.flink.core.security.token.DelegationTokenProvider",
		"META-INF/services/org.apache.flink.core.security.token.DelegationTokenReceiver",
		"yarnam/flink/TokenProvider.class",
		"yarnam/flink/TokenReceiver.class",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("entries %q, want %q", names, want)
	}
	if !strings.HasPrefix(string(entries[want[0]]), "Manifest-Version: 1.0\r\n") {
		t.Errorf("manifest %q", entries[want[0]])
	}
	if got := string(entries[want[1]]); got != "yarnam.flink.TokenProvider\n" {
		t.Errorf("provider service file %q", got)
	}
	if got := string(entries[want[2]]); got != "yarnam.flink.TokenReceiver\n" {
		t.Errorf("receiver service file %q", got)
	}
	for _, tc := range []struct {
		entry   string
		strings []string
	}{
		{want[3], []string{tokenService, EnvTokens, EnvTokensEvery}},
		{want[4], []string{tokenService}},
	} {
		b := entries[tc.entry]
		if len(b) < 8 || binary.BigEndian.Uint16(b[6:8]) != classfile.ClassVersion {
			t.Errorf("%s: not a version-%d class file", tc.entry, classfile.ClassVersion)
			continue
		}
		cf, err := classfile.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.entry, err)
		}
		var got []string
		for _, s := range cf.StringConstants() {
			got = append(got, string(s))
		}
		if !slices.Equal(got, tc.strings) {
			t.Errorf("%s: string constants %q, want %q", tc.entry, got, tc.strings)
		}
	}
}

// WriteTokenJar writes the jar owner-only under its name, replaces an older copy, and leaves no
// temporary file beside it; a directory that does not exist is an error naming it.
func TestWriteTokenJar(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, TokenJarName), []byte("an older jar"), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := WriteTokenJar(dir)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, TokenJarName) {
		t.Errorf("path %s, want %s", path, filepath.Join(dir, TokenJarName))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tokenJar()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the file is not TokenJar's jar")
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 {
		t.Errorf("%d files in the directory, want the jar alone", len(left))
	}
	missing := filepath.Join(dir, "no-such-dir")
	if _, err := WriteTokenJar(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteTokenJar(%s): %v, want an error naming the directory", missing, err)
	}
}
