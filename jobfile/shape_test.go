package jobfile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckShapeBounds: the shape check passes what a job file is made of (strings and comments with
// brackets, dots and '=' in them, multi-line strings and arrays, inline tables, arrays of tables) and
// stops at the first bound passed, naming its line; the bounds themselves are allowed
// (docs/running.md#limits-on-input-files).
func TestCheckShapeBounds(t *testing.T) {
	nest := func(n int) string { return "x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n" }
	inline := func(n int) string { return "x = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n" }
	dotted := func(n int) string { return strings.Repeat("a.", n-1) + "a = 1\n" }
	for _, c := range []struct{ name, doc, err string }{
		{"a job file", `name = "a.b = [[{"   # [not = a header]
tags = ['x.y', "z\"]"]
"external-resource.gpu.amount" = 1
external-resource.gpu.yarn.config-key = "yarn.io/gpu"
s = """
[not.a.header]
x = {
"""
t = '''
{{{{ ''' 
a = [
  1, # ]]]
  [2, 3],
]
env = { A = "1", B.C = "2", D = {} }
[[arr.of.tables]]
k = 1.5
[ 'quoted.part' . bare ]
`, ""},
		{"nested 32 deep", nest(MaxNesting), ""},
		{"nested 33 deep", nest(MaxNesting + 1), "line 1: arrays and inline tables nested more than 32 deep"},
		{"inline tables 32 deep", inline(MaxNesting), ""},
		{"inline tables 33 deep", inline(MaxNesting + 1), "line 1: arrays and inline tables nested more than 32 deep"},
		{"a key of 32 parts", dotted(MaxKeyParts), ""},
		{"a key of 33 parts", "n = 1\n" + dotted(MaxKeyParts+1), "line 2: a key or table header of more than 32 dotted parts"},
		{"a header of 33 parts", "[" + strings.Repeat("a.", MaxKeyParts) + "a]\n", "line 1: a key or table header of more than 32 dotted parts"},
		{"a quoted dotted key is one part", `"` + strings.Repeat("a.", 100) + `" = 1` + "\n", ""},
		{"an inline key of 33 parts", "x = {" + strings.TrimSuffix(dotted(MaxKeyParts+1), "\n") + "}\n", "line 1: a key or table header of more than 32 dotted parts"},
		{"10000 keys", strings.Repeat("a = 1\n", MaxKeys), ""},
		{"10001 keys", strings.Repeat("a = 1\n", MaxKeys+1), "line 10001: more than 10000 keys and tables"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkShape([]byte(c.doc))
			if c.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, c.err, err.Error())
		})
	}
}

// TestReadSkipsAByteOrderMark: an editor's byte order mark does not become part of the first key.
func TestReadSkipsAByteOrderMark(t *testing.T) {
	j, err := LoadJob(writeJob(t, "\uFEFFname = \"bom\"\n[taskexecutor]\ncommand = \"./worker\"\n"))
	require.NoError(t, err)
	assert.Equal(t, "bom", j.Name)
}
