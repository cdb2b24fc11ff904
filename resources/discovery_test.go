package resources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	p := script(t, `sleep 30`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
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
