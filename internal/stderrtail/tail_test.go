package stderrtail

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTailKeepsTheLastLinesBoundedAndPrintable(t *testing.T) {
	var tl Tail
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&tl, "line %d\n", i)
	}
	_, _ = tl.Write([]byte("bash: line 1: ./driver.sh: No such file or directory\x1b[2J\x07\xff\n"))
	got := tl.Lines()
	ls := strings.Split(got, "\n")
	require.Len(t, ls, DefaultLines)
	assert.Equal(t, "line 81", ls[0])
	assert.Equal(t, "bash: line 1: ./driver.sh: No such file or directory[2J\uFFFD", ls[len(ls)-1], "ESC and BEL are dropped, bad UTF-8 replaced")

	var big Tail
	_, _ = big.Write([]byte("first\n" + strings.Repeat("x", 3*DefaultBytes) + "\nlast"))
	assert.LessOrEqual(t, len(big.Lines()), DefaultBytes)
	assert.Equal(t, "last", big.Lines(), "a line cut by the byte bound is dropped")
	assert.Equal(t, int64(6+3*DefaultBytes+5), big.Written())

	small := Tail{MaxLines: 2, MaxBytes: 64}
	fmt.Fprint(&small, "a\nb\nc\n")
	assert.Equal(t, "b\nc", small.Lines())
	var none Tail
	assert.Equal(t, "", none.Lines())
}
