package am

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/container/contract"
)

func TestDriverStderrTailKeepsTheLastLinesBoundedAndPrintable(t *testing.T) {
	var tl stderrTail
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&tl, "line %d\n", i)
	}
	_, _ = tl.Write([]byte("bash: line 1: ./driver.sh: No such file or directory\x1b[2J\x07\xff\n"))
	got := tl.lines()
	ls := strings.Split(got, "\n")
	require.Len(t, ls, driverTailLines)
	assert.Equal(t, "line 81", ls[0])
	assert.Equal(t, "bash: line 1: ./driver.sh: No such file or directory[2J\uFFFD", ls[len(ls)-1], "ESC and BEL are dropped, bad UTF-8 replaced")

	var big stderrTail
	_, _ = big.Write([]byte(strings.Repeat("x", 3*driverTailBytes) + "\nlast"))
	assert.LessOrEqual(t, len(big.lines()), driverTailBytes)
	assert.True(t, strings.HasSuffix(big.lines(), "\nlast"))
}

func TestDriverOutcomeCarriesTheDriversLastStderrLines(t *testing.T) {
	d := &DriverConfig{Command: "./driver.sh", tail: &stderrTail{}}
	_, _ = d.tail.Write([]byte("bash: line 1: ./driver.sh: No such file or directory\n"))
	a := &AM{cfg: Config{Driver: d}}
	code := 127
	a.driverExit = &code
	out := a.driverOutcome()
	require.NotNil(t, out)
	assert.Equal(t, contract.Failed, out.Status)
	assert.Contains(t, out.Diagnostics, `the driver "./driver.sh" exited with code 127`)
	assert.Contains(t, out.Diagnostics, "./driver.sh: No such file or directory")

	code = 0
	assert.Equal(t, "the driver exited with code 0", a.driverOutcome().Diagnostics, "a driver that succeeded adds nothing")
}
