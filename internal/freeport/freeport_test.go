package freeport

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ports are distinct, free (a server can bind each at once) and below the ephemeral range, where
// an outgoing connection never takes one between the pick and the bind.
func TestPickIsBelowTheEphemeralRangeAndFree(t *testing.T) {
	ports, err := Pick("127.0.0.1", 5)
	require.NoError(t, err)
	require.Len(t, ports, 5)
	seen := map[int]bool{}
	low := ephemeralLow()
	for _, p := range ports {
		assert.False(t, seen[p], "distinct")
		seen[p] = true
		if low-Floor >= minSpan {
			assert.GreaterOrEqual(t, p, Floor)
			assert.Less(t, p, low, "below the ephemeral range %d", low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		require.NoError(t, err, "port %d is free", p)
		_ = l.Close()
	}
}

// A node whose ephemeral range leaves no room below it (or whose range file is unreadable or
// garbled) still gets ports: the kernel's, or Linux's default range start.
func TestPickWithoutRoomBelowTheEphemeralRange(t *testing.T) {
	old := rangeFile
	t.Cleanup(func() { rangeFile = old })
	dir := t.TempDir()

	rangeFile = filepath.Join(dir, "range")
	require.NoError(t, os.WriteFile(rangeFile, []byte("10500\t60999\n"), 0o644))
	assert.Equal(t, 10500, ephemeralLow())
	ports, err := Pick("127.0.0.1", 2)
	require.NoError(t, err)
	require.Len(t, ports, 2)
	assert.NotEqual(t, ports[0], ports[1])

	for _, body := range []string{"", "x y", "0 1", "99999 1"} {
		require.NoError(t, os.WriteFile(rangeFile, []byte(body), 0o644))
		assert.Equal(t, 32768, ephemeralLow(), "%q", body)
	}
	rangeFile = filepath.Join(dir, "missing")
	assert.Equal(t, 32768, ephemeralLow())
}

// A port another process holds on any local address, the wildcard included, is not handed out: the
// servers bind the wildcard, which such a port makes fail, whatever address Pick was named.
func TestPickSkipsAPortHeldOnAnyLocalAddress(t *testing.T) {
	low := ephemeralLow()
	if low-Floor < minSpan {
		t.Skipf("the ephemeral range starts at %d: no room below it on this machine", low)
	}
	old := startAt
	t.Cleanup(func() { startAt = old })
	for _, addr := range []string{"0.0.0.0", "127.0.0.2", "127.0.0.1"} {
		t.Run(addr, func(t *testing.T) {
			held := holdPortBelow(t, addr, low)
			startAt = func(int) int { return held - Floor } // the scan starts at the held port
			ports, err := Pick("127.0.0.1", 1)
			require.NoError(t, err)
			assert.NotEqual(t, held, ports[0], "port %d is held on %s", held, addr)
			l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(ports[0])))
			require.NoError(t, err, "the wildcard can bind port %d", ports[0])
			_ = l.Close()
		})
	}
}

// holdPortBelow listens on addr at the first port from Floor up that is free on every address, and
// keeps it until the test ends.
func holdPortBelow(t *testing.T, addr string, low int) int {
	t.Helper()
	for p := Floor; p < low; p++ {
		probe, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		_ = probe.Close()
		l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(p)))
		if err != nil {
			continue
		}
		t.Cleanup(func() { _ = l.Close() })
		return p
	}
	t.Fatalf("no port below %d to hold on %s", low, addr)
	return 0
}
