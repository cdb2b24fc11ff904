package cli

import (
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseTakesFlagsAroundTheArguments: flags may come before and after the arguments, "--" ends
// them, -Dkey=value is -D key=value, and the count of arguments, an unknown flag and --keytab without
// --principal are errors in the usage texts' words.
func TestParseTakesFlagsAroundTheArguments(t *testing.T) {
	newFS := func() (*flag.FlagSet, *Defines, *bool) {
		fs := flag.NewFlagSet("check", flag.ContinueOnError)
		var d Defines
		fs.Var(&d, "D", "")
		v := fs.Bool("v", false, "")
		fs.String("keytab", "", "")
		fs.String("principal", "", "")
		fs.String("queue", "", "")
		return fs, &d, v
	}
	fs, d, v := newFS()
	pos, err := Parse(fs, []string{"-Da=1", "job.toml", "-v", "-D", "b=2", "--", "-x"}, "check", -1, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"job.toml", "-x"}, pos)
	assert.Equal(t, Defines{"a=1", "b=2"}, *d)
	assert.True(t, *v)

	for _, c := range []struct {
		args []string
		want int
		err  string
	}{
		{[]string{"a", "b"}, 1, "give exactly one job file (got 2 arguments)"},
		{[]string{"a"}, 0, `unexpected argument "a"; check takes no arguments`},
		{[]string{"a", "--queu", "q"}, 1, `unknown flag --queu (did you mean "--queue"?)`},
		{[]string{"a", "--keytab", "k"}, 1, "--keytab k needs --principal"},
		{[]string{"a", "-D", "novalue"}, 1, `-D "novalue": "novalue" is not key=value`},
		{[]string{"a", "-D"}, 1, "-D needs a value"},
	} {
		fs, _, _ := newFS()
		_, err := Parse(fs, c.args, "check", c.want, "one job file")
		require.Error(t, err, "%q", c.args)
		assert.Contains(t, err.Error(), c.err, "%q", c.args)
	}
	fs, _, _ = newFS()
	_, err = Parse(fs, []string{"--help"}, "check", 1, "one job file")
	assert.Equal(t, flag.ErrHelp, err)
}

// TestFlagErrorSaysWhatTheFlagTakes: a value of the wrong form says what the flag's type takes; a
// flag name with a control character or of any length is quoted and cut.
func TestFlagErrorSaysWhatTheFlagTakes(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("json", false, "")
	fs.Int("tail", 0, "")
	fs.Uint("n", 0, "")
	fs.Float64("f", 0, "")
	fs.Duration("every", 0, "")
	fs.SetOutput(nilWriter{})
	for args, want := range map[string]string{
		"--json=maybe":                  `--json "maybe": not true or false`,
		"--tail=abc":                    `--tail "abc": not a whole number`,
		"--tail=99999999999999999999":   `--tail "99999999999999999999": out of range for a whole number`,
		"-n=-1":                         `-n "-1": not a whole number of 0 or more`,
		"-f=x":                          `-f "x": not a number`,
		"--every=5":                     `--every "5": needs a unit, e.g. 5ms or 5s`,
		"--every=soon":                  `--every "soon": not a duration`,
		"--\x1b[31mred":                 `unknown flag "\x1b[31mred"`,
		"--" + strings.Repeat("z", 500): `unknown flag "zzz`,
	} {
		err := fs.Parse([]string{args})
		require.Error(t, err, args)
		got := FlagError(fs, err).Error()
		assert.Contains(t, got, want, "%q", args)
		assert.Less(t, len(got), 300, "%q: bounded", args)
	}
}

type nilWriter struct{}

func (nilWriter) Write(b []byte) (int, error) { return len(b), nil }

// TestCheckDirWantsAURIOrAnAbsolutePath: a savepoint directory is a URI or an absolute path, one line,
// at most 4096 bytes.
func TestCheckDirWantsAURIOrAnAbsolutePath(t *testing.T) {
	for _, ok := range []string{"", "/sp", "file:///tmp/sp", "hdfs://nn:8020/sp", "s3://bucket/sp"} {
		assert.NoError(t, CheckDir("--dir", ok), ok)
	}
	for v, want := range map[string]string{
		"sp":                            "not a URI or an absolute path",
		"file://":                       "not a URI or an absolute path",
		"://x":                          "not a URI or an absolute path",
		" /sp":                          "a space at an end, a line break or NUL",
		"/sp\x00":                       "a space at an end, a line break or NUL",
		"/" + strings.Repeat("x", 4096): "longer than 4096 bytes",
	} {
		err := CheckDir("--dir", v)
		require.Error(t, err, "%q", v)
		assert.Contains(t, err.Error(), want, "%q", v)
		assert.Less(t, len(err.Error()), 300, "%q: the value is cut", v)
	}
}

// TestDefinesRefuseWhatTOMLWouldCut: a -D without "=" or with a line break is refused, naming it.
func TestDefinesRefuseWhatTOMLWouldCut(t *testing.T) {
	var d Defines
	require.NoError(t, d.Set("a=b=c"))
	assert.ErrorContains(t, d.Set("=1"), "is not key=value")
	assert.ErrorContains(t, d.Set("k=1\n2"), `the value of "k" has a line break`)
	assert.Equal(t, Defines{"a=b=c"}, d)
	assert.Equal(t, []string{"-D", "a=1", "x", "--", "-Db=2"}, SplitJoinedDefines([]string{"-Da=1", "x", "--", "-Db=2"}))
}
