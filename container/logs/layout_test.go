package logs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

type mapConf map[string]string

func (m mapConf) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

func dirsOf(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Format)+" "+c.Dir)
	}
	return out
}

func TestAppDirsPerHadoopVersion(t *testing.T) {
	got := dirsOf(AppDirs(mapConf{}, "alice", "application_1_12345", 12345))
	want := []string{
		"TFile /tmp/logs/alice/bucket-logs-tfile/2345/application_1_12345", // 3.3+: id mod 10000
		"TFile /tmp/logs/alice/logs-tfile/application_1_12345",             // 3.3+ older path
		"TFile /tmp/logs/alice/logs/application_1_12345",                   // 3.1-3.2
		"IFile /tmp/logs/alice/bucket-logs-ifile/2345/application_1_12345",
		"IFile /tmp/logs/alice/logs-ifile/application_1_12345", // 3.1-3.2 IFile
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("defaults:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = dirsOf(AppDirs(mapConf{
		KeyFileFormats:     "IFile,TFile",
		KeyRemoteAppLogDir: "hdfs://nn:8020/app-logs",
		KeyRemoteDirSuffix: "agg",
		"yarn.log-aggregation.IFile.remote-app-log-dir-suffix": "ix",
	}, "bob", "application_1_0007", 7))
	want = []string{
		"IFile /app-logs/bob/bucket-ix/0007/application_1_0007",
		"IFile /app-logs/bob/ix/application_1_0007",
		"TFile /app-logs/bob/bucket-agg-tfile/0007/application_1_0007",
		"TFile /app-logs/bob/agg-tfile/application_1_0007",
		"TFile /app-logs/bob/agg/application_1_0007",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("configured:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNodeOfFile(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.2_44197":         "127.0.0.2:44197",
		"nm-1.example.com_8041":   "nm-1.example.com:8041",
		"nm_1.example.com_8041":   "nm_1.example.com:8041",
		"nm-1_8041_1700000000000": "nm-1:8041", // rolling aggregation's timestamp
		"application_1_0001.har":  "application_1_0001.har",
	} {
		if got := NodeOfFile(in); got != want {
			t.Errorf("NodeOfFile(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFilter(t *testing.T) {
	am := "container_1795464051493_0001_01_000001"
	am2 := "container_e17_1795464051493_0001_02_000001"
	te := "container_1795464051493_0001_01_000002"
	big := "container_e03_1795464051493_0001_01_1099511627777" // epoch bits above 40: number 1
	for _, c := range []struct {
		id   string
		want bool
	}{{am, true}, {am2, true}, {te, false}, {big, true}, {"junk", false}} {
		if got := IsAMContainer(c.id); got != c.want {
			t.Errorf("IsAMContainer(%s) = %v", c.id, got)
		}
	}
	f := Filter{AM: true}
	if !f.Wants(am) || f.Wants(te) {
		t.Error("--am filter")
	}
	f = Filter{Container: te, File: "stdout"}
	if f.Wants(am) || !f.Wants(te) || !f.WantsFile("stdout") || f.WantsFile("stderr") {
		t.Error("--container/--file filter")
	}
}

func TestTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc\n"}, // a last line without newline gets one
		{"a\n", 5, "a\n"},
		{"", 3, ""},
	} {
		var b strings.Builder
		p := &Printer{W: &b, Tail: c.n}
		if err := p.Content(strings.NewReader(c.in)); err != nil || b.String() != c.want {
			t.Errorf("tail %d of %q = %q, %v; want %q", c.n, c.in, b.String(), err, c.want)
		}
	}
}

// dirFS is a local directory as the FS of the aggregated logs.
type dirFS struct{ root string }

func (d dirFS) ReadDir(dir string) ([]os.FileInfo, error) {
	ents, err := os.ReadDir(filepath.Join(d.root, dir))
	if err != nil {
		return nil, err
	}
	var out []os.FileInfo
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, fi)
	}
	return out, nil
}

func (d dirFS) Open(name string) (ReadAtCloser, error) { return os.Open(filepath.Join(d.root, name)) }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadAggregatedFindsEachLayout puts the real files into each version's directory and reads
// them through AppDirs, with the filters.
func TestReadAggregatedFindsEachLayout(t *testing.T) {
	const app = "application_1795464051493_0001"
	for _, c := range []struct{ name, dir, fixture string }{
		{"3.4 TFile", "tmp/logs/root/bucket-logs-tfile/0001/" + app, "testdata/tfile-3.4"},
		{"3.1 TFile", "tmp/logs/root/logs/" + app, "testdata/tfile-3.4"},
		{"3.4 IFile", "tmp/logs/root/bucket-logs-ifile/0001/" + app, "testdata/ifile-3.4"},
		{"3.1 IFile", "tmp/logs/root/logs-ifile/" + app, "testdata/ifile-3.4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			names, _ := filepath.Glob(filepath.Join(c.fixture, "127.0.0.*"))
			for _, n := range names {
				copyFile(t, n, filepath.Join(root, c.dir, filepath.Base(n)))
			}
			// What a NodeManager leaves while uploading is not read.
			copyFile(t, "testdata/tfile-3.4/yarn-logs.txt", filepath.Join(root, c.dir, "127.0.0.9_1.tmp"))
			var out strings.Builder
			res, err := ReadAggregated(dirFS{root}, AppDirs(mapConf{}, "root", app, 1), Filter{File: "stdout"}, &Printer{W: &out})
			if err != nil {
				t.Fatal(err)
			}
			if res.Dir != "/"+c.dir || len(res.NodeFiles) != 2 || len(res.Skipped) != 0 || len(res.Uploading) != 1 {
				t.Fatalf("found %+v", res)
			}
			if res.Printed != 2 || strings.Count(out.String(), "gpu indexes from file=") != 2 || !strings.Contains(out.String(), ": stdout (") {
				t.Errorf("printed %d files:\n%s", res.Printed, out.String())
			}
			if len(res.Containers) != 3 {
				t.Errorf("containers %v, want the AM's and two TaskExecutors'", res.Containers)
			}
			out.Reset()
			res, err = ReadAggregated(dirFS{root}, AppDirs(mapConf{}, "root", app, 1), Filter{AM: true, File: "am.stderr"}, &Printer{W: &out, Tail: 1})
			if err != nil || res.Printed != 1 || strings.Count(out.String(), "\n") != 2 {
				t.Errorf("--am --file am.stderr --tail 1: %d files, %v:\n%s", res.Printed, err, out.String())
			}
		})
	}
}

func TestReadAggregatedNothingThere(t *testing.T) {
	res, err := ReadAggregated(dirFS{t.TempDir()}, AppDirs(mapConf{}, "root", "application_1_0001", 1), Filter{}, &Printer{W: io.Discard})
	if err != nil || res.Dir != "" || len(res.Tried) != 5 {
		t.Fatalf("%+v %v", res, err)
	}
}

type deniedFS struct{}

func (deniedFS) ReadDir(dir string) ([]os.FileInfo, error) {
	return nil, &os.PathError{Op: "readdir", Path: dir, Err: os.ErrPermission}
}
func (deniedFS) Open(string) (ReadAtCloser, error) { return nil, errors.New("unused") }

// TestExplainMissing: every reason there are no aggregated logs gets its own message naming what
// to do.
func TestExplainMissing(t *testing.T) {
	report := func(s hadooppb.LogAggregationStatusProto) *hadooppb.ApplicationReportProto {
		return &hadooppb.ApplicationReportProto{LogAggregationStatus: s.Enum()}
	}
	res, _ := ReadAggregated(dirFS{t.TempDir()}, AppDirs(mapConf{}, "alice", "application_1_0001", 1), Filter{}, &Printer{W: io.Discard})
	denied, _ := ReadAggregated(deniedFS{}, AppDirs(mapConf{}, "alice", "application_1_0001", 1), Filter{}, &Printer{W: io.Discard})
	for _, c := range []struct {
		name   string
		report *hadooppb.ApplicationReportProto
		res    AggResult
		want   []string
	}{
		{"disabled", report(hadooppb.LogAggregationStatusProto_LOG_DISABLED), res, []string{"log aggregation is off", "yarn.log-aggregation-enable=true", "DISABLED"}},
		{"not yet", report(hadooppb.LogAggregationStatusProto_LOG_RUNNING), res, []string{"not aggregated yet", "status RUNNING", "run yarn-am logs again", "yarn-am status application_1_0001", "/tmp/logs/alice/bucket-logs-tfile/0001/application_1_0001"}},
		{"not started", report(hadooppb.LogAggregationStatusProto_LOG_NOT_START), res, []string{"not aggregated yet", "NOT_START"}},
		{"failed", report(hadooppb.LogAggregationStatusProto_LOG_FAILED), res, []string{"did not succeed", "FAILED", "NodeManagers' logs"}},
		{"timed out", report(hadooppb.LogAggregationStatusProto_LOG_TIME_OUT), res, []string{"did not succeed", "TIME_OUT"}},
		{"succeeded but gone", report(hadooppb.LogAggregationStatusProto_LOG_SUCCEEDED), res, []string{"were deleted", "yarn.log-aggregation.retain-seconds", "yarn.nodemanager.remote-app-log-dir"}},
		{"old RM", &hadooppb.ApplicationReportProto{}, res, []string{"status not reported"}},
		{"no permission", report(hadooppb.LogAggregationStatusProto_LOG_SUCCEEDED), denied, []string{"no permission", "as bob", "owner (alice)", "run as alice"}},
		{"upload unfinished", report(hadooppb.LogAggregationStatusProto_LOG_SUCCEEDED), AggResult{Dir: "/tmp/logs/a/x", Uploading: []string{"n_1.tmp"}}, []string{"did not finish uploading", "only n_1.tmp", "NodeManagers' logs"}},
	} {
		err := explainMissing("application_1_0001", "alice", "bob", c.report, c.res)
		var na *NotAvailableError
		if !errors.As(err, &na) {
			t.Errorf("%s: %v is not a NotAvailableError", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}
