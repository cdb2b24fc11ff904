package resources

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script writes an executable shell script into a temporary directory.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "discover.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	return p
}

func execDriver(t *testing.T, params map[string]string) Driver {
	t.Helper()
	f, ok := LookupDriver("exec")
	require.True(t, ok)
	d, err := f("fpga", params)
	require.NoError(t, err)
	return d
}

func TestExecDriverSuccess(t *testing.T) {
	// Echoes its argv so the test sees how args were split; ids with blanks and spaces.
	p := script(t, `echo " 3, ,5,7 ,9"; echo "second line ignored"; echo "$@" >&2; printf '%s\n' "$@" > "$(dirname "$0")/argv"`)
	d := execDriver(t, map[string]string{"path": p, "args": `--mode "fast lane" 'a b'`, "timeout": "5"})
	infos, err := d.Discover(context.Background(), 3)
	require.NoError(t, err)
	assert.Equal(t, []Info{{"index": "3"}, {"index": "5"}, {"index": "7"}}, infos)
	argv, err := os.ReadFile(filepath.Join(filepath.Dir(p), "argv"))
	require.NoError(t, err)
	assert.Equal(t, "3\n--mode\nfast lane\na b\n", string(argv))
}

func TestExecDriverNoStrayArgument(t *testing.T) {
	p := script(t, `echo "$#"`)
	ids, err := RunDiscovery(context.Background(), p, 1, "", time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, ids, "only the amount is passed when args are unset")
}

func TestExecDriverTooFew(t *testing.T) {
	p := script(t, `echo "0,1"; echo "only two FPGAs free" >&2`)
	_, err := execDriver(t, map[string]string{"path": p}).Discover(context.Background(), 3)
	var de *DiscoveryError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, `resource "fpga": discovery program `+p+` 3 printed 2 id(s) ("0,1") but 3 are needed; stderr: only two FPGAs free`, err.Error())
}

func TestExecDriverNonZeroExit(t *testing.T) {
	p := script(t, `echo "0"; echo "device busy: /dev/fpga0" >&2; exit 3`)
	_, err := execDriver(t, map[string]string{"path": p, "args": "--x"}).Discover(context.Background(), 1)
	assert.Equal(t, `resource "fpga": discovery program `+p+` 1 --x failed: exit status 3; stderr: device busy: /dev/fpga0`, err.Error())
}

func TestExecDriverTimeout(t *testing.T) {
	// The child sleeps too and keeps stdout open: the whole process group must die.
	p := script(t, `echo "starting" >&2; sleep 30 & sleep 30`)
	start := time.Now()
	_, err := execDriver(t, map[string]string{"path": p, "timeout": "300ms"}).Discover(context.Background(), 1)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, `resource "fpga": discovery program `+p+` 1 timed out after 300ms; stderr: starting`, err.Error())
}

func TestRunDiscoveryCancelled(t *testing.T) {
	// The program says it runs through a named pipe; the cancel comes then, not after a guess.
	ready := filepath.Join(t.TempDir(), "ready")
	require.NoError(t, syscall.Mkfifo(ready, 0o600))
	p := script(t, `echo up > '`+ready+`'; sleep 30`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if r, err := os.Open(ready); err == nil { // blocks until the program opens it to write
			_, _ = io.ReadAll(r)
			r.Close()
		}
		cancel()
	}()
	_, err := RunDiscovery(ctx, p, 1, "", time.Minute)
	var de *DiscoveryError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "was cancelled: context canceled", de.Reason)
}

func TestRunDiscoveryMissingProgram(t *testing.T) {
	_, err := RunDiscovery(context.Background(), "/nonexistent/list-fpgas", 1, "", time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `discovery program "/nonexistent/list-fpgas" does not exist`)
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                   nil,
		"   ":                                nil,
		"--enable-coordination":              {"--enable-coordination"},
		`--coordination-file "/tmp/a b"  -x`: {"--coordination-file", "/tmp/a b", "-x"},
		`'it''s' "a\"b" c\ d`:                {"its", `a"b`, "c d"},
		`"" ''`:                              {"", ""},
		`"$HOME" '\n'`:                       {"$HOME", `\n`},
	} {
		got, err := SplitArgs(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{`"open`, `'open`, `end\`} {
		_, err := SplitArgs(in)
		assert.Error(t, err, in)
	}
}

func TestParseDiscoveryOutput(t *testing.T) {
	assert.Equal(t, []string{"0", "2"}, ParseDiscoveryOutput(" 0 ,, 2,\r\n3,4\n"))
	assert.Empty(t, ParseDiscoveryOutput(""))
}

func TestParseTimeout(t *testing.T) {
	d, err := ParseTimeout("90")
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second, d)
	d, err = ParseTimeout("2m")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Minute, d)
	for _, bad := range []string{"0", "-5s", "soon", ""} {
		_, err := ParseTimeout(bad)
		assert.Error(t, err, bad)
	}
}

// The exec driver's ids follow ExecIDRule; anything else fails discovery naming the program, quoting
// its output (bounded, control characters removed) and saying what is valid.
func TestExecDriverOutputIsChecked(t *testing.T) {
	const valid = "; valid output: distinct ids of 1 to 256 characters from A-Z a-z 0-9 _ . : / -, comma-separated on the first line, e.g. 0,1 or fpga0,fpga1"
	for _, tc := range []struct{ out, why string }{
		{`fpga0,fpga0`, `"fpga0" appears twice`},
		{`hello world`, `"hello world" is not a valid id`},
		{`-1,abc;def`, `"abc;def" is not a valid id`},
		{`0,$(id)`, `"$(id)" is not a valid id`},
		{`a=b`, `"a=b" is not a valid id`},
		{`"0"`, `"\"0\"" is not a valid id`},
		{`é`, `"é" is not a valid id`},
		{`0\t1`, `"01" is not a valid id`},
		{strings.Repeat("x", 257), `"` + strings.Repeat("x", 200) + `"... (257 bytes) is not a valid id`},
	} {
		p := script(t, `printf '%b\n' '`+tc.out+`'`)
		_, err := execDriver(t, map[string]string{"path": p}).Discover(context.Background(), 1)
		require.Error(t, err, tc.out)
		var de *DiscoveryError
		require.ErrorAs(t, err, &de)
		assert.Contains(t, err.Error(), `resource "fpga": discovery program `+p+` 1 printed `)
		assert.Contains(t, err.Error(), ": "+tc.why+valid+"; stderr was empty")
		assert.NotContains(t, err.Error(), "\t")
	}
	for out, want := range map[string][]string{
		"0000:3b:00.0,/dev/fpga1": {"0000:3b:00.0", "/dev/fpga1"},
		"acl0 , acl1,":            {"acl0", "acl1"},
		"ID_1.a-b":                {"ID_1.a-b"},
	} {
		p := script(t, `echo '`+out+`'`)
		ids, err := RunDiscovery(context.Background(), p, len(want), "", 5*time.Second)
		require.NoError(t, err, out)
		assert.Equal(t, want, ids)
	}
}

// Output is bounded: a program that prints more than 64 KiB on stdout or stderr is killed with its
// group and discovery fails saying so (a 200 MB line used to be read whole).
func TestRunDiscoveryBoundsOutput(t *testing.T) {
	for _, tc := range []struct{ body, stream string }{
		{`head -c 200000000 /dev/zero | tr '\0' 7; echo`, "stdout"},
		{`yes "a long complaint" >&2`, "stderr"},
		{`yes 0`, "stdout"},
	} {
		start := time.Now()
		_, err := RunDiscovery(context.Background(), script(t, tc.body), 1, "", time.Minute)
		assert.Less(t, time.Since(start), 20*time.Second, "gives up within 20 seconds")
		var de *DiscoveryError
		require.ErrorAs(t, err, &de, tc.body)
		assert.Equal(t, "printed more than 64 KiB on "+tc.stream+" and was killed (the contract is one line of comma-separated ids on stdout)", de.Reason)
		assert.LessOrEqual(t, len(de.Stderr), maxStderr+3)
	}
}

// A background child the program leaves running is killed with the program's group once the program
// is done, also when discovery succeeded.
func TestRunDiscoveryKillsLeftoverChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	p := script(t, `sleep 300 </dev/null >/dev/null 2>&1 & echo $! >"`+pidFile+`"; echo 0`)
	ids, err := RunDiscovery(context.Background(), p, 1, "", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{"0"}, ids)
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid := strings.TrimSpace(string(data))
	assert.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return true // gone
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		return len(f) > 0 && (f[0] == "Z" || f[0] == "X") // killed, not yet reaped by its new parent
	}, 10*time.Second, 20*time.Millisecond, "the background child %s is still running", pid)
}

// GPU indexes are numbers: "00,0" names GPU 0 twice and fails discovery (it used to become
// CUDA_VISIBLE_DEVICES=00,0); "007" is returned as "7".
func TestGPUIndexesCompareAsNumbers(t *testing.T) {
	rule := IDRule{Valid: func(id string) bool { return id != "" && strings.Trim(id, "0123456789") == "" },
		Describe: "distinct GPU indexes", Canon: NumericCanon}
	for out, why := range map[string]string{
		"00,0":    `"00" and "0" are the same id`,
		"1,2,001": `"1" and "001" are the same id`,
		"3,3":     `"3" appears twice`,
	} {
		_, err := RunDiscoveryWith(context.Background(), script(t, "echo "+out), 1, "", 5*time.Second, rule)
		var de *DiscoveryError
		require.ErrorAs(t, err, &de, out)
		assert.Equal(t, "printed "+QuoteOutput(out)+": "+why+"; valid output: distinct GPU indexes", de.Reason)
	}
	ids, err := RunDiscoveryWith(context.Background(), script(t, "echo 007,10,0"), 3, "", 5*time.Second, rule)
	require.NoError(t, err)
	assert.Equal(t, []string{"7", "10", "0"}, ids)
	assert.Equal(t, "0", NumericCanon("000"))
	assert.Equal(t, "0x1", NumericCanon("0x1"))
}

// A program whose background child left the process group (setsid) while holding stdout: the program
// exited 0 after printing its ids, which are kept (discovery used to fail with "WaitDelay expired
// before I/O complete"), the child is killed with its session, and a note says so.
func TestRunDiscoveryKeepsOutputOfSetsidChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	ready := filepath.Join(dir, "ready")
	p := script(t, `mkfifo "`+ready+`" || exit 9
setsid sh -c 'echo $$ >"`+pidFile+`"; echo up >"`+ready+`"; exec sleep 300' &
read -r _ <"`+ready+`"
echo 0,1
echo "a warning" >&2
exit 0
`)
	start := time.Now()
	res, err := RunDiscoveryResult(context.Background(), p, 2, "", 30*time.Second, ExecIDRule)
	assert.Less(t, time.Since(start), 20*time.Second, "gives up within 20 seconds")
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1"}, res.IDs)
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid := strings.TrimSpace(string(data))
	require.Len(t, res.Notes, 2, "%q", res.Notes)
	assert.Equal(t, "a warning", res.Notes[0])
	assert.Contains(t, res.Notes[1], "the discovery program had exited, but process "+pid+" (session "+pid+", killed with all of it) still held its output; killed it")
	assert.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return true // gone
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
	}, 10*time.Second, 20*time.Millisecond, "the setsid child %s is still running", pid)
}

func TestQuoteOutput(t *testing.T) {
	assert.Equal(t, `"abc"`, QuoteOutput("a\x00b\x1bc\r\n"))
	assert.Equal(t, `"`+strings.Repeat("é", 100)+`"`, QuoteOutput(strings.Repeat("é", 100)))
	assert.Equal(t, `"`+strings.Repeat("é", 100)+`"... (202 bytes)`, QuoteOutput(strings.Repeat("é", 101)))
}
