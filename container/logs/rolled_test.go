package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRolledPartsAreMarkedAndNotPrintedTwice: the two files a NodeManager's rolling aggregation
// wrote (node_port_<millis>, one per cycle) are both read, their headers marked "rolled, aggregated"
// and attributed to the node; a part printed so is known to the printer (Has), so the live part does
// not print the NodeManager's local copy of it again, while the current file is not known.
func TestRolledPartsAreMarkedAndNotPrintedTwice(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "tmp/logs/alice/bucket-logs-tfile/0001/application_1_0001")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const c = "container_1_0001_01_000001"
	for name, part := range map[string][2]string{
		"127.0.0.2_4000_1795462882310": {"jobmanager.log.1", "first part\n"},
		"127.0.0.2_4000_1795462887310": {"jobmanager.log.2", "second part\n"},
	} {
		tf := buildTFile(tfileSpec{codec: "none", blocks: [][]byte{
			tRecord("VERSION", []byte{0, 0, 0, 1}),
			tRecord(c, tContainer(part)),
		}})
		if err := os.WriteFile(filepath.Join(dir, name), tf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	p := &Printer{W: &out, Mark: rolledMark}
	res, err := ReadAggregated(dirFS{root}, []Candidate{{Dir: "tmp/logs/alice/bucket-logs-tfile/0001/application_1_0001"}}, Filter{}, p)
	if err != nil {
		t.Fatal(err)
	}
	want := "==> " + c + " on 127.0.0.2:4000: jobmanager.log.1 (11 bytes, rolled, aggregated) <==\nfirst part\n\n" +
		"==> " + c + " on 127.0.0.2:4000: jobmanager.log.2 (12 bytes, rolled, aggregated) <==\nsecond part\n"
	if out.String() != want || res.Printed != 2 {
		t.Fatalf("printed %d:\n%s\nwant:\n%s", res.Printed, out.String(), want)
	}
	if !p.Has(c, "jobmanager.log.2") || p.Has(c, "jobmanager.log") {
		t.Error("the printer knows the parts it printed and only those")
	}
}
