package gpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run the real built-in NVIDIA script against the fake nvidia-smi, whose health files
// (FAKE_GPU_HEALTH_DIR) make a GPU read unhealthy (docs/gpus.md#gpu-health-a-sick-gpu-is-taken-out-of-service).

// markSick runs the script's mark-sick mode for uuid as the test's user; its exit code and stderr.
func (e *coordEnv) markSick(uuid string, extra ...string) (int, string) {
	e.t.Helper()
	o := e.startOwner(99, append([]string{"0", "--enable-coordination-mode", "--coordination-dir", e.coord, "--mark-sick", uuid}, extra...)...)
	o.end()
	return o.rc, o.stderr
}

// sickLines are the "sick ..." lines of every claim file of the coordination directory.
func (e *coordEnv) sickLines() []string {
	e.t.Helper()
	files, err := filepath.Glob(filepath.Join(e.coord, "claims.*"))
	require.NoError(e.t, err)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(e.t, err)
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "sick ") {
				out = append(out, l)
			}
		}
	}
	return out
}

// A GPU marked sick is skipped by every discovery of the node while it reads unhealthy, named with
// the field that says so when the node runs out of GPUs; the mark outlives the process that made it;
// once the GPU reads healthy it is handed out again and the mark goes.
func TestSickGPUIsKeptOutOfClaimsUntilItReadsHealthy(t *testing.T) {
	health := t.TempDir()
	e := newCoordEnv(t, 2).withEnv("FAKE_GPU_HEALTH_DIR=" + health)
	uuids := fakeUUIDs(t, e.env)
	sick := filepath.Join(health, uuids["0"])
	require.NoError(t, os.WriteFile(sick, []byte("ecc.errors.uncorrected.volatile.total=2\n"), 0o644))

	rc, stderr := e.markSick(uuids["0"])
	require.Equal(t, 0, rc, stderr)
	lines := e.sickLines()
	require.Len(t, lines, 1, "the mark outlives its maker")
	assert.Regexp(t, `^sick uuid:`+uuids["0"]+` \d+$`, lines[0])
	rc, stderr = e.markSick(uuids["0"])
	require.Equal(t, 0, rc, stderr)
	assert.Len(t, e.sickLines(), 1, "marked twice, kept once")

	a := e.startOwner(0, "1", "--enable-coordination-mode", "--coordination-dir", e.coord)
	defer a.end()
	require.Equal(t, 0, a.rc, a.stderr)
	assert.Equal(t, "1", a.out, "the sick GPU 0 is skipped")
	b := e.startOwner(1, "1", "--enable-coordination-mode", "--coordination-dir", e.coord)
	b.end()
	assert.Equal(t, 1, b.rc)
	assert.Contains(t, b.stderr, "0 out of service: marked sick, and reads ecc.errors.uncorrected.volatile.total=2, 1 by pid")

	// Healthy again: handed out, and the caller's mark goes.
	require.NoError(t, os.Remove(sick))
	c := e.startOwner(2, "1", "--enable-coordination-mode", "--coordination-dir", e.coord)
	defer c.end()
	require.Equal(t, 0, c.rc, c.stderr)
	assert.Equal(t, "0", c.out)
	assert.Empty(t, e.sickLines(), "a GPU that reads healthy loses its mark")
}

// Each health field, the driver's older name of the slowdown field, and a health that cannot be read
// keep a marked GPU out; a lost GPU too. N/A is healthy.
func TestSickGPUHealthAsTheScriptReadsIt(t *testing.T) {
	for _, c := range []struct {
		name, health, lacks, want string
	}{
		{name: "remapping failed", health: "remapped_rows.failure=Yes", want: "reads remapped_rows.failure=Yes"},
		{name: "remapping pending", health: "remapped_rows.pending=Yes", want: "reads remapped_rows.pending=Yes"},
		{name: "pages pending", health: "retired_pages.pending=Yes", want: "reads retired_pages.pending=Yes"},
		{name: "slowdown", health: "clocks_event_reasons.hw_slowdown=Active", want: "reads clocks_event_reasons.hw_slowdown=Active"},
		{name: "slowdown on an older driver", health: "clocks_throttle_reasons.hw_slowdown=Active", lacks: "clocks_event_reasons.hw_slowdown", want: "reads clocks_throttle_reasons.hw_slowdown=Active"},
		{name: "lost", health: "*=[GPU is lost]", want: "reads ecc.errors.uncorrected.volatile.total=[GPU is lost]"},
		{name: "health unreadable", lacks: strings.Join(append(NVIDIAHealthFields, "clocks_throttle_reasons.hw_slowdown"), ","), want: "its health cannot be read: nvidia-smi knows none of the health fields"},
		{name: "ecc n/a", health: "ecc.errors.uncorrected.volatile.total=[N/A]"},
		{name: "retired pages not supported", health: "retired_pages.pending=[Not Supported]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			health := t.TempDir()
			e := newCoordEnv(t, 2).withEnv("FAKE_GPU_HEALTH_DIR="+health, "FAKE_GPU_DRIVER_LACKS="+c.lacks)
			uuids := fakeUUIDs(t, e.env)
			if c.health != "" {
				require.NoError(t, os.WriteFile(filepath.Join(health, uuids["0"]), []byte(c.health+"\n"), 0o644))
			}
			rc, stderr := e.markSick(uuids["0"])
			require.Equal(t, 0, rc, stderr)
			o := e.startOwner(0, "2", "--enable-coordination-mode", "--coordination-dir", e.coord)
			o.end()
			if c.want == "" {
				assert.Equal(t, 0, o.rc, o.stderr)
				assert.Equal(t, "0,1", o.out, "healthy: handed out")
				return
			}
			assert.Equal(t, 1, o.rc)
			assert.Contains(t, o.stderr, "0 out of service: marked sick, and "+c.want)
		})
	}
}

// --mark-sick takes a UUID, not with --release; without coordination it does nothing.
func TestMarkSickArguments(t *testing.T) {
	e := newCoordEnv(t, 2)
	rc, stderr := e.markSick("GPU-1 x")
	assert.Equal(t, 1, rc)
	assert.Contains(t, stderr, `--mark-sick "GPU-1 x" is not a GPU UUID`)
	rc, stderr = e.markSick("GPU-1", "--release")
	assert.Equal(t, 1, rc)
	assert.Contains(t, stderr, "--mark-sick with --release: give one")
	o := e.startOwner(0, "0", "--mark-sick", "GPU-1") // outside YARN: no coordination
	o.end()
	assert.Equal(t, 0, o.rc, o.stderr)
	assert.Empty(t, e.sickLines())
}

// Another user's mark keeps the GPU out while it reads unhealthy, and is left alone (not the caller's
// to remove) once it reads healthy; a mark in a file owned by another uid than its name says is
// ignored, as any claim there is (TestCoordinationSkipsInvalidClaimFiles).
func TestSickMarksOfOtherUsers(t *testing.T) {
	const other = 12345 // a uid that is not the test's
	health := t.TempDir()
	e := newCoordEnv(t, 2).withEnv("FAKE_GPU_HEALTH_DIR=" + health)
	uuids := fakeUUIDs(t, e.env)
	theirs := filepath.Join(e.coord, fmt.Sprintf("claims.%d@.AbCd1234", other))
	mark := fmt.Sprintf("sick uuid:%s %d\n", uuids["0"], time.Now().Unix())
	require.NoError(t, os.WriteFile(theirs, []byte(mark), 0o640))
	require.NoError(t, os.Chown(theirs, other, other))
	require.NoError(t, os.WriteFile(filepath.Join(health, uuids["0"]), []byte("remapped_rows.pending=Yes\n"), 0o644))

	o := e.startOwner(0, "2", "--enable-coordination-mode", "--coordination-dir", e.coord)
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, "0 out of service: marked sick, and reads remapped_rows.pending=Yes")

	// Their name, the wrong owner: the mark is ignored.
	forged := filepath.Join(e.coord, fmt.Sprintf("claims.%d@.EfGh5678", other+1))
	require.NoError(t, os.Rename(theirs, forged))
	o = e.startOwner(1, "2", "--enable-coordination-mode", "--coordination-dir", e.coord)
	o.end()
	assert.Equal(t, 0, o.rc, o.stderr)
	assert.Contains(t, o.stderr, fmt.Sprintf("it is owned by uid %d, not by uid %d as its name says", other, other+1))
	require.NoError(t, os.Rename(forged, theirs))

	// Healthy again: handed out; their mark stays theirs.
	require.NoError(t, os.Remove(filepath.Join(health, uuids["0"])))
	o = e.startOwner(2, "2", "--enable-coordination-mode", "--coordination-dir", e.coord)
	defer o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	assert.Equal(t, "0,1", o.out)
	data, err := os.ReadFile(theirs)
	require.NoError(t, err)
	assert.Equal(t, mark, string(data), "another user's file is never written")
}
