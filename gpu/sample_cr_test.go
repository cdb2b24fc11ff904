package gpu

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseNVIDIASampleSaysCarriageReturn: nvidia-smi output with a lone \r as its line end (or a \r
// inside a line) is refused with a message that names the carriage return in words; Windows line
// ends on good lines are still read (issue 33 §2).
func TestParseNVIDIASampleSaysCarriageReturn(t *testing.T) {
	good := "0, GPU-aaaa, 12, 100, 16000, 50.00"
	for name, out := range map[string]string{
		"lone \\r line ends": good + "\r1, GPU-bbbb, 12, 100, 16000, 50.00\r",
		"\\r in a field":     "0, GPU-aaaa, 1\r2, 100, 16000, 50.00\r\n",
	} {
		// The line names its GPU: the GPU's reading says it (Problem), or the line names none and the
		// sample's error does.
		ts, err := ParseNVIDIASample([]byte(out))
		if err == nil {
			require.Len(t, ts.GPUs, 1, name)
			assert.Contains(t, ts.GPUs[0].Problem, "a carriage return (\\r) in its line", name)
			continue
		}
		assert.Contains(t, err.Error(), "carriage return (\\r)", name)
	}
	ts, err := ParseNVIDIASample([]byte(good + "\r\n" + strings.Replace(good, "0, GPU-aaaa", "1, GPU-bbbb", 1) + "\r\n"))
	require.NoError(t, err)
	assert.Len(t, ts.GPUs, 2)
	assert.Empty(t, ts.GPUs[0].Problem)
}
