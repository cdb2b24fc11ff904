package resources

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiscoveryOutputSaysCarriageReturn: output refused because of a carriage return (a lone \r as
// the line end, Windows line ends with too few ids) says so in words, and shows it as \r; output whose
// lines merely end in \r\n is still read (issue 33 §2).
func TestDiscoveryOutputSaysCarriageReturn(t *testing.T) {
	digits := IDRule{Describe: "digits", Valid: func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }}
	for body, want := range map[string][]string{
		`printf '0\r1\r'`:  {`"0\r1"`, "carriage return (\\r)", "Windows line ends"},
		`printf '0\r\n'`:   {"printed 1 id(s)", "carriage return (\\r)"},
		`printf 'x,0\r\n'`: {`"x"`, "carriage return (\\r)"},
	} {
		_, err := RunDiscoveryWith(context.Background(), script(t, body), 2, "", 5*time.Second, digits)
		require.Error(t, err, body)
		for _, w := range want {
			assert.Contains(t, err.Error(), w, body)
		}
	}
	ids, err := RunDiscovery(context.Background(), script(t, `printf '0,1\r\n'`), 2, "", 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1"}, ids)
	assert.Empty(t, CRNote("0,1"))
}
