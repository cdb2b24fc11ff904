package flinkconf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func entries(t *testing.T, es []Entry) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, e := range es {
		m[e.Key] = e.Value
	}
	return m
}

// TestDefaultConfigs reads the default config.yaml of Flink 1.20 and of 2.x (testdata, each naming the
// apache/flink commit it comes from) to the keys Flink reads from them.
func TestDefaultConfigs(t *testing.T) {
	for _, tc := range []struct {
		file string
		keys int
		bind bool // rest.bind-address: set in 1.20, commented out in 2.x
	}{
		{"config-1.20.yaml", 13, true},
		{"config-2.x.yaml", 12, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			es, err := ParseYAML(tc.file, data)
			if err != nil {
				t.Fatal(err)
			}
			got := entries(t, es)
			for k, v := range map[string]string{
				"jobmanager.rpc.address":          "localhost",
				"jobmanager.rpc.port":             "6123",
				"jobmanager.memory.process.size":  "1600m",
				"taskmanager.numberOfTaskSlots":   "1",
				"taskmanager.memory.process.size": "1728m",
				"parallelism.default":             "1",
				"rest.address":                    "localhost",
			} {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if opts := got["env.java.opts.all"]; !strings.HasPrefix(opts, "--add-exports=java.base/sun.net.util=ALL-UNNAMED ") || !strings.HasSuffix(opts, "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED") {
				t.Errorf("env.java.opts.all = %q", opts)
			}
			if _, ok := got["rest.bind-address"]; ok != tc.bind {
				t.Errorf("rest.bind-address set: %v, want %v", ok, tc.bind)
			}
			if len(es) != tc.keys {
				t.Errorf("%d keys, want %d: %v", len(es), tc.keys, got)
			}
			if es[0].Key != "env.java.opts.all" || es[0].Line != 8 {
				t.Errorf("first entry %+v: keys keep the file's order and lines", es[0])
			}
		})
	}
}

// writeFile writes a config.yaml (or another name) in a directory of its own.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestYAMLAliasBombIsRefusedFast: ~1 KB of aliases nested in aliases ("billion laughs") would flatten to
// billions of keys. With more than 50 aliases of collections it is refused as Flink's reader refuses it;
// with 50 or fewer (5 aliases a level, 10 levels: 5^10 mappings), by the node budget. Either way at
// once, naming the file and the line.
func TestYAMLAliasBombIsRefusedFast(t *testing.T) {
	bomb := func(levels, width int) string {
		var b strings.Builder
		b.WriteString("l0: &l0 {k0: 1, k1: 1, k2: 1, k3: 1, k4: 1}\n")
		for i := 1; i <= levels; i++ {
			fmt.Fprintf(&b, "l%d: &l%d {", i, i)
			for j := 0; j < width; j++ {
				fmt.Fprintf(&b, "a%d: *l%d, ", j, i-1)
			}
			b.WriteString("z: 0}\n")
		}
		return b.String()
	}
	listBomb := "l0: &l0 [" + strings.Repeat("x, ", 40) + "x]\n" + bomb(5, 5)[strings.Index(bomb(5, 5), "\n")+1:]
	for _, tc := range []struct {
		name, text, want string
	}{
		{"80 aliases", bomb(8, 10), `:7: more than 50 aliases of mappings or lists (*l5)`},
		{"50 aliases", bomb(10, 5), `:6: key "l5": flattening gives more than 10000 keys`},
		{"25 aliases of a long list", listBomb, `:6: key "l5": expanding its aliases visits more than 100000 nodes`},
		{"an alias of a list", "a: &a [x, y, z]\nb: {k0: *a, k1: *a}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.text) > 1200 {
				t.Fatalf("the bomb is %d bytes; it should be about 1 KB", len(tc.text))
			}
			p := writeFile(t, YAMLName, tc.text)
			start := time.Now()
			_, err := ReadFile(p)
			took := time.Since(start)
			t.Logf("%s (%d bytes): %v in %v", tc.name, len(tc.text), err, took)
			if took > time.Second {
				t.Errorf("took %v; a bomb must be refused within 1 s", took)
			}
			if tc.want == "" {
				if err != nil {
					t.Errorf("error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), p+tc.want) {
				t.Errorf("error %v, want one containing %q", err, p+tc.want)
			}
		})
	}
}

// TestYAMLAliasCycle: an alias back into the mapping that contains it would recurse for ever.
func TestYAMLAliasCycle(t *testing.T) {
	for _, text := range []string{
		"external-resource: &r\n  gpu:\n    again: *r\n",
		"a: &r\n  b:\n    <<: *r\n",
	} {
		_, err := ParseYAML(YAMLName, []byte(text))
		if err == nil || !strings.Contains(err.Error(), "(an alias cycle)") {
			t.Errorf("%q: error %v", text, err)
		}
	}
}

// TestYAMLAnchorsAndMergeKeys: anchors, aliases and merge keys read as Flink's YAML reader reads them:
// an alias is its anchor's value again; a merge key adds what the mapping does not set itself, an
// earlier merged mapping winning over a later one, wherever the << stands.
func TestYAMLAnchorsAndMergeKeys(t *testing.T) {
	es, err := ParseYAML(YAMLName, []byte(`
size: &size 1728m
defaults: &base
  amount: 2
  key: yarn.io/gpu
other: &other
  amount: 7
  param: {level: "3"}
list: &l [gpu, fpga]
taskmanager.memory.process.size: *size
external-resources: *l
gpu:
  amount: 1
  <<: *base
fpga:
  <<: [*other, *base]
  key: yarn.io/fpga
`))
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, es)
	for k, v := range map[string]string{
		"taskmanager.memory.process.size": "1728m", "external-resources": "gpu;fpga",
		"gpu.amount": "1", "gpu.key": "yarn.io/gpu",
		"fpga.amount": "7", "fpga.param.level": "3", "fpga.key": "yarn.io/fpga",
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestYAMLDuplicates: a key set twice, flat and nested, is refused naming both lines.
func TestYAMLDuplicates(t *testing.T) {
	_, err := ParseYAML(YAMLName, []byte("a.b: 1\na:\n  b: 2\n"))
	if err == nil || err.Error() != `a.b is set twice in config.yaml: line 1 ("1") and line 3 ("2"); keep one` {
		t.Errorf("error %v", err)
	}
}

// TestLegacyRefusesWhatFlinkWouldSkip and TestLegacyQuotes: the line reader (legacy.go).
func TestLegacyRefusesWhatFlinkWouldSkip(t *testing.T) {
	es, err := Parse(LegacyName, []byte("---\na: 1 # comment\nb:c\nc:\njust words\n: v\nd: x: y\n---\n"))
	probs := Problems(err)
	want := []string{
		`flink-conf.yaml:3: "b:c" is not a key: value line (no space after ':'?)`,
		`flink-conf.yaml:4: "c:" has no value`,
		`flink-conf.yaml:5: "just words" is not a key: value line`,
		`flink-conf.yaml:6: ": v" has no key`,
		`flink-conf.yaml:8: "---" starts a second YAML document`,
	}
	if len(probs) != len(want) {
		t.Fatalf("problems %v, want %d", probs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(probs[i].Error(), w) {
			t.Errorf("problem %d: %v, want %s", i, probs[i], w)
		}
	}
	if got := entries(t, es); len(got) != 2 || got["a"] != "1" || got["d"] != "x: y" {
		t.Errorf("the lines that could be read: %v", got)
	}
}

func TestLegacyQuotes(t *testing.T) {
	es, err := Parse(LegacyName, []byte("\uFEFFa: \"x y\"\nb: 'z'\nc: \"half\nd: it's\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, es)
	for k, v := range map[string]string{"a": "x y", "b": "z", "c": `"half`, "d": "it's"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestReadFileIsBounded: what is not a regular file is refused without being read (a FIFO would block,
// /dev/zero never ends), and so is a file over MaxBytes.
func TestReadFileIsBounded(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), YAMLName)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := writeFile(t, LegacyName, "# "+strings.Repeat("x", MaxBytes)+"\n")
	for path, want := range map[string]string{
		fifo:        "is a named pipe, not a regular file",
		"/dev/zero": "is a device, not a regular file",
		big:         "is larger than 1 MiB",
	} {
		start := time.Now()
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), path+" "+want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", path, d)
		}
	}
}
