package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeoutFlag(t *testing.T) {
	for in, want := range map[string]string{
		"5":    `needs a unit, e.g. 5s or 5m`,
		"1.5":  `needs a unit, e.g. 1.5s or 1.5m`,
		"5x":   `not a duration; write a number with a unit, e.g. 5s, 90s, 2m`,
		"soon": `not a duration; write a number with a unit, e.g. 5s, 90s, 2m`,
		"-5s":  `must be positive, e.g. 5s or 2m`,
		"0s":   `must be positive, e.g. 5s or 2m`,
	} {
		var f Timeout
		assert.EqualError(t, f.Set(in), want, in)
	}
	var f Timeout
	require.NoError(t, f.Set("90s"))
	assert.Equal(t, 90*time.Second, time.Duration(f))
}
