package jobfile

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/internal/text"
)

// TestParseMemoryMBRefusesABareByteUnit: "b" and "ib" are read only after a unit ("2gb", "2gib");
// "512b" and "2ib" are refused, not read as MiB.
func TestParseMemoryMBRefusesABareByteUnit(t *testing.T) {
	for in, want := range map[string]int64{"2gb": 2048, "2gib": 2048, "512mb": 512, "512MiB": 512, "1tb": 1 << 20, "2048kib": 2} {
		got, err := ParseMemoryMB(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"512b", "2ib", "512B", "1 b", "ib", "b", "2bib", "5xb"} {
		_, err := ParseMemoryMB(in)
		assert.Error(t, err, in)
	}
}

// TestJobErrorListIsBounded: thousands of problems give a message of text.MaxListed lines and
// "and K more", not megabytes.
func TestJobErrorListIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "unknown%d = 1\n", i)
	}
	_, err := LoadJob(writeJob(t, b.String()+"[taskexecutor]\ncommand = \"x\"\n"))
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "3000 problems")
	assert.Contains(t, msg, fmt.Sprintf("and %d more", 3000-text.MaxListed))
	assert.Equal(t, text.MaxListed+2, strings.Count(msg, "\n")+1, "a head line, %d problems and the tail", text.MaxListed)
	assert.Less(t, len(msg), 8<<10)
}

// TestJobEnvValidatesYarnAMVariables: the YARN_AM_* variables a job may set are checked at job-file
// time: a YARN_AM_TOKENS_REFRESH the launcher cannot read would turn token refresh off in the container.
func TestJobEnvValidatesYarnAMVariables(t *testing.T) {
	for _, table := range []string{"taskexecutor", "am"} {
		for v, ok := range map[string]bool{"30s": true, "5m": true, "1s": true, "banana": false, "": false, "0s": false, "-5s": false, "1ms": false, "30": false} {
			body := "[taskexecutor]\ncommand = \"x\"\n"
			body += fmt.Sprintf("[%s.env]\nYARN_AM_TOKENS_REFRESH = %q\n", table, v)
			_, err := LoadJob(writeJob(t, body))
			if ok {
				assert.NoError(t, err, "%s %q", table, v)
				continue
			}
			if assert.Error(t, err, "%s %q", table, v) {
				assert.Contains(t, err.Error(), table+".env: YARN_AM_TOKENS_REFRESH")
			}
		}
	}
}

// TestDefineWithALineBreakIsRefused: a -D value with a newline or carriage return is refused naming the
// key; read as TOML it kept its first line and dropped the rest.
func TestDefineWithALineBreakIsRefused(t *testing.T) {
	for _, d := range []string{"taskexecutor.instances=3\n40", "queue=a\rb", "taskexecutor.env.A=x\ny"} {
		f, err := Read(writeJob(t, "[taskexecutor]\ncommand = \"x\"\n"))
		require.NoError(t, err)
		_, err = f.ApplyDefines([]string{d})
		require.Error(t, err, d)
		k, _, _ := strings.Cut(d, "=")
		assert.Contains(t, err.Error(), "-D "+k, d)
		assert.Contains(t, err.Error(), "line break", d)
	}
}

// TestReadNamesTheKeyOfAValueOutOfRange: the TOML library refuses a number out of range or a date that
// is no date with a message that names only the value; Read names the key written on that line, in a
// table, in a multi-line array and with a dotted key, and says what is valid.
func TestReadNamesTheKeyOfAValueOutOfRange(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"integer", "name = \"x\"\n[taskexecutor]\ncommand = \"x\"\ninstances = 99999999999999999999\n",
			[]string{"line 4", "taskexecutor.instances: 99999999999999999999 is out of range", "9223372036854775807"}},
		{"hex integer at the top", "priority = 0x1ffffffffffffffff\n[taskexecutor]\ncommand = \"x\"\n",
			[]string{"line 1", "priority: 0x1ffffffffffffffff is out of range"}},
		{"float", "[taskexecutor]\ncommand = \"x\"\nmemory = 1e999\n",
			[]string{"line 3", "taskexecutor.memory: 1e999 is out of range for float64", "1.8e308"}},
		{"date", "[am]\nstarted = 1979-13-27\n",
			[]string{"line 2", "am.started: invalid datetime", "YYYY-MM-DD"}},
		{"dotted key", "external-resource.gpu.amount = 99999999999999999999\n",
			[]string{"line 1", "external-resource.gpu.amount: 99999999999999999999"}},
		{"quoted segment", "[taskexecutor.env]\n\"A B\" = 99999999999999999999\n",
			[]string{"line 2", `taskexecutor.env."A B": 99999999999999999999`}},
		{"multi-line array", "[taskexecutor]\ncommand = \"x\"\ntags = [\n  1,\n  99999999999999999999,\n]\n",
			[]string{"line 5", "taskexecutor.tags: 99999999999999999999"}},
	} {
		_, err := Read(writeJob(t, c.body))
		require.Error(t, err, c.name)
		var se *SyntaxError
		require.ErrorAs(t, err, &se, c.name)
		for _, w := range c.want {
			assert.Contains(t, err.Error(), w, c.name)
		}
	}
}

// TestSyntaxErrorIsBoundedAndInert: the library's message quotes part of the file; a 100 KB key or an
// escape sequence in it reaches the terminal bounded and inert.
func TestSyntaxErrorIsBoundedAndInert(t *testing.T) {
	long := strings.Repeat("k", 100<<10)
	for name, body := range map[string]string{
		"100 KB key out of range": long + " = 99999999999999999999\n",
		"100 KB integer":          "a = " + strings.Repeat("9", 100<<10) + "\n",
		"100 KB datetime":         "a = 1979-05-27T" + strings.Repeat("9", 100<<10) + "\n",
		"escape in a bad key":     "a\x1b[2J\x07 = 1\n",
		"escape in a bad value":   "a = \x1b[2J\x07\n",
	} {
		_, err := Read(writeJob(t, body))
		require.Error(t, err, name)
		msg := err.Error()
		assert.Less(t, len(msg), 2<<10, name)
		assert.NotContains(t, msg, strings.Repeat("k", 300), name)
		assert.NotContains(t, msg, strings.Repeat("9", 300), name)
		for _, c := range msg {
			assert.False(t, c < 0x20 && c != '\n' && c != '\t' || c == 0x7f, "%s: control byte %q in %q", name, c, msg)
		}
	}
}
