package flinkdist

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustYAML(t *testing.T, text string) *Config {
	t.Helper()
	c, err := parseYAML(strings.NewReader(text), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantKeys(t *testing.T, c *Config, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := c.Get(k)
		if !ok || got != v {
			t.Errorf("%s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	if len(c.Keys()) != len(want) {
		t.Errorf("keys %v, want %d keys", c.Keys(), len(want))
	}
}

func TestParseYAMLFlattensAsFlinkDoes(t *testing.T) {
	c := mustYAML(t, `# Flink's nested form and its flat form mix in one file.
env:
  java:
    opts:
      all: --add-opens=java.base/java.lang=ALL-UNNAMED   --add-opens=java.base/java.util=ALL-UNNAMED
jobmanager:
  rpc:
    address: localhost   # a comment
    port: 6123
taskmanager.numberOfTaskSlots: 2
rest.bind-address: '0.0.0.0'
pipeline.name: "it's # not a comment"
quoted: 'it''s'
empty:
nothing: ~
external-resources:
  - gpu
  - fpga
pipeline.jars: [file:///a.jar, "file:///b.jar"]
`)
	wantKeys(t, c, map[string]string{
		"env.java.opts.all":             "--add-opens=java.base/java.lang=ALL-UNNAMED   --add-opens=java.base/java.util=ALL-UNNAMED",
		"jobmanager.rpc.address":        "localhost",
		"jobmanager.rpc.port":           "6123",
		"taskmanager.numberOfTaskSlots": "2",
		"rest.bind-address":             "0.0.0.0",
		"pipeline.name":                 "it's # not a comment",
		"quoted":                        "it's",
		"empty":                         "",
		"nothing":                       "",
		"external-resources":            "gpu;fpga",
		"pipeline.jars":                 "file:///a.jar;file:///b.jar",
	})
	if got := c.Keys()[0]; got != "env.java.opts.all" {
		t.Errorf("first key %q: keys keep the file's order", got)
	}
}

// TestParseYAMLAsFlinkReadsIt: what Flink's YAML reader takes is read as it reads it; anchors,
// aliases, block scalars and flow mappings were refused by the hand-written parser this package had,
// and are read now as Flink reads them (internal/flinkconf).
func TestParseYAMLAsFlinkReadsIt(t *testing.T) {
	c := mustYAML(t, "base: &b 1g\ntaskmanager.memory.process.size: *b\nm: {k1: v1, k2: v2}\nlog: |\n  text\nopts: &o\n  x: 1\nmore:\n  <<: *o\n  y: 2\n")
	wantKeys(t, c, map[string]string{"base": "1g", "taskmanager.memory.process.size": "1g", "m.k1": "v1", "m.k2": "v2",
		"log": "text\n", "opts.x": "1", "more.y": "2", "more.x": "1"})
}

func TestParseYAMLRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"a: *x\n", "config.yaml:1: the alias *x names no anchor"},
		{"a:\n  - b: c\n", "config.yaml:2: key \"a\": a list item is itself a list or a mapping"},
		{"a: 1\n    b: 2\n", "config.yaml:2: mapping values are not allowed"},
		{"just text\n", "config.yaml:1: the document is not a mapping"},
		{"a: 'open\n", "config.yaml:2: found unexpected end of stream"},
		{"a:\n\tb: 1\n", "config.yaml:2: the line is indented with a tab"},
		{"a: [x;y]\n", "contains ';'"},
		{"a: 1\n---\n", "a second YAML document"},
		{"a: 1\nb: 2\na: 3\n", "a is set twice in config.yaml: line 1 (\"1\") and line 3 (\"3\")"},
		{"a: !java.lang.Runtime x\n", "config.yaml:1: key \"a\": the tag !java.lang.Runtime is not standard YAML"},
	} {
		_, err := parseYAML(strings.NewReader(tc.text), "config.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.text, err, tc.want)
		}
	}
}

func TestParseLegacy(t *testing.T) {
	// The legacy reader is the one resources.Load uses too: a value's one pair of quotes is removed,
	// and "key:" with no value, once read as "", is refused as Flink would skip it.
	c, err := parseLegacy(strings.NewReader("# legacy\njobmanager.rpc.address: jm.example # trailing\n\nenv.java.opts.all: \"-Da=b -Dc=d\"\nnested: a: b\n"), "flink-conf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantKeys(t, c, map[string]string{"jobmanager.rpc.address": "jm.example", "env.java.opts.all": "-Da=b -Dc=d", "nested": "a: b"})
	_, err = parseLegacy(strings.NewReader("a: 1\nb=2\nempty:\n"), "flink-conf.yaml")
	for _, want := range []string{`flink-conf.yaml:2: "b=2" is not a key: value line`, `flink-conf.yaml:3: "empty:" has no value`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %s", err, want)
		}
	}
}

// The layers: the home's file, then the job file's keys, then -D; what yarn-am writes reads back to
// the same configuration.
func TestMergeWriteAndReadBack(t *testing.T) {
	home := mustYAML(t, "rest:\n  port: 8081\nparallelism.default: 1\nenv.java.opts.all: -Dx='a b'\n")
	job := NewConfig()
	job.Set("rest.port", "0")
	job.Set("pipeline.name", "it's: #1")
	home.Merge(job)
	if err := home.ApplyDefines([]string{"parallelism.default=4", "s.list=a;b"}); err != nil {
		t.Fatal(err)
	}
	if err := home.ApplyDefines([]string{"novalue"}); err == nil || !strings.Contains(err.Error(), `-D "novalue": want key=value`) {
		t.Errorf("error %v", err)
	}
	dir := t.TempDir()
	if err := home.WriteConfDir(dir); err != nil {
		t.Fatal(err)
	}
	back, src, err := loadConfDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if src != filepath.Join(dir, configFile) {
		t.Errorf("read %s", src)
	}
	wantKeys(t, back, map[string]string{"rest.port": "0", "parallelism.default": "4", "env.java.opts.all": "-Dx='a b'",
		"pipeline.name": "it's: #1", "s.list": "a;b"})
}

func TestLoadConfDirPrefersConfigYAML(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, legacyConfigFile), []byte("a: legacy\n"), 0o644)
	c, src, err := loadConfDir(dir)
	if err != nil || filepath.Base(src) != legacyConfigFile {
		t.Fatalf("%v %s", err, src)
	}
	os.WriteFile(filepath.Join(dir, configFile), []byte("a: standard\n"), 0o644)
	c, src, err = loadConfDir(dir)
	if v, _ := c.Get("a"); err != nil || v != "standard" || filepath.Base(src) != configFile {
		t.Fatalf("%v %s %q", err, src, v)
	}
	if _, _, err := loadConfDir(t.TempDir()); err == nil || !os.IsNotExist(err) && !strings.Contains(err.Error(), "neither") {
		t.Errorf("empty dir: %v", err)
	}
}

// fakeHome is a Flink 1.20.5 home's layout with a flink-dist jar that carries only a config.yaml.
func fakeHome(t *testing.T, distConfig string) *Home {
	t.Helper()
	return fakeHomeAt(t, "1.20.5", distConfig)
}

// fakeHomeAt is fakeHome of another Flink version.
func fakeHomeAt(t *testing.T, version, distConfig string) *Home {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"lib", "bin", "plugins/external-resource-gpu"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	f, err := os.Create(filepath.Join(dir, "lib", "flink-dist-"+version+".jar"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, _ := z.Create(configFile)
	w.Write([]byte(distConfig))
	z.Close()
	f.Close()
	for _, n := range []string{"lib/log4j-core-2.24.3.jar", "lib/flink-cep-" + version + ".jar", "bin/bash-java-utils.jar"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	h, err := OpenHome(dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHomeConfigFallsBackToFlinkDistDefaults(t *testing.T) {
	h := fakeHome(t, "env:\n  java:\n    opts:\n      all: --add-opens=java.base/java.lang=ALL-UNNAMED\n")
	if h.Version != "1.20.5" {
		t.Errorf("version %q", h.Version)
	}
	c, src, err := h.Config()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(src, "flink-dist-1.20.5.jar!/config.yaml") {
		t.Errorf("source %s", src)
	}
	wantKeys(t, c, map[string]string{"env.java.opts.all": "--add-opens=java.base/java.lang=ALL-UNNAMED"})
	os.MkdirAll(h.ConfDir, 0o755)
	os.WriteFile(filepath.Join(h.ConfDir, legacyConfigFile), []byte("a: b\n"), 0o644)
	if _, src, err := h.Config(); err != nil || !strings.HasSuffix(src, "conf/flink-conf.yaml") {
		t.Errorf("with conf/flink-conf.yaml: %s %v", src, err)
	}
	want := []string{"flink-cep-1.20.5.jar", "log4j-core-2.24.3.jar", "job.jar", "flink-dist-1.20.5.jar"}
	var got []string
	for _, p := range strings.Split(h.Classpath([]string{"/x/job.jar"}), ":") {
		got = append(got, filepath.Base(p))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("classpath %v, want %v (flink-dist last, as Flink's scripts order it)", got, want)
	}
}

func TestOpenHomeNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenHome(dir); err == nil || !strings.Contains(err.Error(), "has no lib/") {
		t.Errorf("empty: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	if _, err := OpenHome(dir); err == nil || !strings.Contains(err.Error(), "no flink-dist-*.jar") {
		t.Errorf("no dist: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "lib", "flink-dist-1.20.5.jar"), nil, 0o644)
	if _, err := OpenHome(dir); err == nil || !strings.Contains(err.Error(), "bash-java-utils.jar") {
		t.Errorf("no bash-java-utils: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "bash-java-utils.jar"), nil, 0o644)
	if _, err := OpenHome(dir); err == nil || !strings.Contains(err.Error(), "no plugins/") {
		t.Errorf("no plugins: %v", err)
	}
}
