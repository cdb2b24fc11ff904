package gpu

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Topology-connected sets (docs/gpus.md#topology-connected-sets): the real built-in script against the
// fake nvidia-smi answering `topo -m` from the fixtures in testdata/fake-nvidia-smi/topo.

// newTopoEnv is a machine of gpus fake GPUs whose `nvidia-smi topo -m` prints the fixture topo.
func newTopoEnv(t *testing.T, topo string, gpus int) *coordEnv {
	t.Helper()
	return newCoordEnv(t, gpus).withEnv("FAKE_GPU_TOPO=" + topo)
}

// take runs one coordinated discovery of amount GPUs (plus extra flags) that must succeed, and returns
// its owner (alive until the test ends, so its claims hold).
func (e *coordEnv) take(i int, amount string, extra ...string) *owner {
	e.t.Helper()
	o := e.startOwner(i, append([]string{amount, "--enable-coordination", "--coordination-dir", e.coord}, extra...)...)
	e.t.Cleanup(o.end)
	require.Equal(e.t, 0, o.rc, o.stderr)
	return o
}

// topologyLine is the topology= line the script printed ("" when none).
func (o *owner) topologyLine() string {
	for _, l := range strings.Split(o.stdout, "\n") {
		if v, ok := strings.CutPrefix(l, TopologyLinePrefix); ok {
			return v
		}
	}
	return ""
}

// On the node with two NVLink islands of 4 (0,1,4,5 and 2,3,6,7; the first four GPUs by index span
// both), a worker asking for 4 gets one whole island and the next one the other island.
func TestTopologyIslandsWholeIsland(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	a := e.take(0, "4")
	assert.Equal(t, "0,1,4,5", a.out)
	assert.Empty(t, a.stderr)
	b := e.take(1, "4")
	assert.Equal(t, "2,3,6,7", b.out)
	assert.Empty(t, b.stderr)
	assert.Len(t, e.claimRecords(), 8)

	top, err := ParseTopologyLine(b.topologyLine())
	require.NoError(t, err, b.stdout)
	assert.Equal(t, "NV12", top.Link)
	require.Len(t, top.GPUs, 8)
	assert.Equal(t, TopologyGPU{Index: "2", NUMA: "1", Links: strings.Split("SYS,SYS,X,NV12,SYS,SYS,NV12,NV12", ",")}, top.GPUs[2])
}

// With two GPUs of island A taken, a worker asking for 4 gets island B (the first 4 free GPUs, 2,3,4,5,
// would span both islands).
func TestTopologyIslandsPartlyTaken(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	a := e.take(0, "2")
	assert.Equal(t, "0,1", a.out)
	assert.True(t, strings.HasPrefix(a.topologyLine(), "NV12;"), a.stdout)
	b := e.take(1, "4")
	assert.Equal(t, "2,3,6,7", b.out)
	assert.Empty(t, b.stderr)
}

// With one GPU taken in each island no NVLink-connected set of 4 is free: --topology connected fails
// naming the flag (and takes nothing), prefer takes a set and says on stderr which link it got.
func TestTopologyNoConnectedSetFree(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	assert.Equal(t, "0", e.take(0, "1").out)
	assert.Equal(t, "2", e.withEnv("CUDA_VISIBLE_DEVICES=2").take(1, "1").out)

	c := e.startOwner(2, "4", "--enable-coordination", "--coordination-dir", e.coord, "--topology", "connected")
	c.end()
	assert.Equal(t, 1, c.rc)
	assert.Empty(t, c.out)
	assert.Contains(t, c.stderr, "no NVLink-connected set of 4 GPUs is free (--topology connected): found 8 NVIDIA GPU(s) [0,1,2,3,4,5,6,7], free [1,3,4,5,6,7]; the best free set [1,3,4,5] is linked by SYS at worst, the node's best set of 4 by NV12; --topology prefer takes the best free set instead")
	assert.Len(t, e.claimRecords(), 2, "the failed discovery claimed nothing")

	p := e.take(3, "4", "--topology=prefer")
	assert.Equal(t, "1,3,4,5", p.out)
	assert.Contains(t, p.stderr, "warning: topology: GPUs [1,3,4,5] are linked by SYS at worst (no set of 4 linked by NV12 is free: free [1,3,4,5,6,7]); --topology connected fails instead of taking them")
	assert.True(t, strings.HasPrefix(p.topologyLine(), "SYS/NV12;"), "the line says the node's best too: %s", p.stdout)
	d := e.take(4, "2") // the default is prefer
	assert.Equal(t, "6,7", d.out)
	assert.Empty(t, d.stderr, "6 and 7 are an NVLink pair: nothing to say")
}

// waiter is a discovery started in the background; wait returns its owner once the script ended.
type waiter struct {
	done    chan *owner
	errFile string
}

// startWaiting starts owner i's discovery of amount GPUs with --topology wait and the lock timeout
// (seconds) and returns once the script said it waits (its stderr line), so the test goes on while it
// waits.
func (e *coordEnv) startWaiting(i int, amount, lockTimeout string) *waiter {
	e.t.Helper()
	args := []string{amount, "--enable-coordination", "--coordination-dir", e.coord, "--topology", "wait", "--lock-timeout", lockTimeout}
	w := &waiter{done: make(chan *owner, 1), errFile: e.errFile(i, args)}
	go func() { w.done <- e.startOwner(i, args...) }()
	require.Eventually(e.t, func() bool {
		data, _ := os.ReadFile(w.errFile)
		return strings.Contains(string(data), "(--topology wait)")
	}, 20*time.Second, 20*time.Millisecond, "the script says it waits")
	return w
}

func (w *waiter) wait(t *testing.T) *owner {
	t.Helper()
	select {
	case o := <-w.done:
		t.Cleanup(o.end)
		return o
	case <-time.After(60 * time.Second):
		require.FailNow(t, "the waiting discovery did not end")
		return nil
	}
}

// --topology wait: with one GPU taken in each island no NVLink-connected set of 4 is free, so the
// script waits, without holding the coordination directory's lock (another worker claims a GPU
// meanwhile, with a lock timeout of 1 s), and takes island A once its claimant is gone.
func TestTopologyWaitTakesTheSetOnceFreed(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	a := e.startOwner(0, "1", "--enable-coordination", "--coordination-dir", e.coord)
	require.Equal(t, 0, a.rc, a.stderr)
	assert.Equal(t, "0", a.out)
	assert.Equal(t, "2", e.withEnv("CUDA_VISIBLE_DEVICES=2").take(1, "1").out)

	w := e.startWaiting(2, "4", "30")
	d := e.withEnv("CUDA_VISIBLE_DEVICES=3").take(3, "1", "--lock-timeout", "1")
	assert.Equal(t, "3", d.out, "claimed while the waiter waits: the lock is free")
	a.end() // island A's claimant is gone

	c := w.wait(t)
	require.Equal(t, 0, c.rc, c.stderr)
	assert.Equal(t, "0,1,4,5", c.out)
	assert.True(t, strings.HasPrefix(c.topologyLine(), "NV12;"), c.stdout)
	assert.Equal(t, 1, strings.Count(c.stderr, "\n"), "one line: %q", c.stderr)
	assert.Contains(t, c.stderr, "warning: topology: no NVLink-connected set of 4 GPUs is free (free [1,3,4,5,6,7]); waiting up to 30 s for one (--topology wait)")
	assert.Len(t, e.claimRecords(), 6, "2, 3 and island A")
}

// Two workers wait for 4 GPUs each while each island has one GPU taken: once both claimants are gone
// each waiter gets a whole island, never the same GPU.
func TestTopologyWaitTwoWaitersGetOneIslandEach(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	a := e.startOwner(0, "1", "--enable-coordination", "--coordination-dir", e.coord)
	b := e.withEnv("CUDA_VISIBLE_DEVICES=2").startOwner(1, "1", "--enable-coordination", "--coordination-dir", e.coord)
	require.Equal(t, 0, a.rc, a.stderr)
	require.Equal(t, 0, b.rc, b.stderr)
	w1 := e.startWaiting(2, "4", "30")
	w2 := e.startWaiting(3, "4", "30")
	a.end()
	b.end()
	c1, c2 := w1.wait(t), w2.wait(t)
	require.Equal(t, 0, c1.rc, c1.stderr)
	require.Equal(t, 0, c2.rc, c2.stderr)
	assert.ElementsMatch(t, []string{"0,1,4,5", "2,3,6,7"}, []string{c1.out, c2.out})
	assert.Len(t, e.claimRecords(), 8)
}

// --topology wait gives up after --lock-timeout seconds, claiming nothing, and says what was free; on
// a node without any NVLink-connected set of k it fails at once, without waiting.
func TestTopologyWaitGivesUp(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	assert.Equal(t, "0", e.take(0, "1").out)
	assert.Equal(t, "2", e.withEnv("CUDA_VISIBLE_DEVICES=2").take(1, "1").out)
	c := e.startWaiting(2, "4", "2").wait(t)
	assert.Equal(t, 1, c.rc)
	assert.Empty(t, c.out)
	assert.Contains(t, c.stderr, "no NVLink-connected set of 4 GPUs became free within 2 s (--topology wait): found 8 NVIDIA GPU(s) [0,1,2,3,4,5,6,7], free [1,3,4,5,6,7]; the best free set [1,3,4,5] is linked by SYS at worst; raise --lock-timeout (below discovery-script.timeout) to wait longer, or --topology prefer takes the best free set")
	assert.Len(t, e.claimRecords(), 2, "the waiter claimed nothing")

	p := newTopoEnv(t, "pcie-4", 4)
	o := p.startOwner(0, "2", "--enable-coordination", "--coordination-dir", p.coord, "--topology", "wait", "--lock-timeout", "60")
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, "no set of 2 GPUs of this node is NVLink-connected (found 4 NVIDIA GPU(s) [0,1,2,3]; the best set of 2, [1,2], is linked by PIX at worst), so --topology wait would wait for nothing; --topology prefer takes the best free set")
	assert.NotContains(t, o.stderr, "waiting up to", "it did not wait")
	assert.Empty(t, p.claimRecords())
}

// On the NVSwitch node every set is NVLink-connected, so any amount works with --topology connected;
// within one NUMA node first (GPUs 0-3 on node 0, 4-7 on node 1).
func TestTopologyNVSwitchAnyAmount(t *testing.T) {
	e := newTopoEnv(t, "nvswitch-8", 8)
	a := e.take(0, "3", "--topology", "connected")
	assert.Equal(t, "0,1,2", a.out)
	b := e.take(1, "4", "--topology", "connected")
	assert.Equal(t, "4,5,6,7", b.out, "one NUMA node's GPUs before 3,4,5,6 across two")
	c := e.take(2, "1", "--topology", "connected")
	assert.Equal(t, "3", c.out)
	for _, o := range []*owner{a, b, c} {
		assert.Empty(t, o.stderr)
	}
	assert.True(t, strings.HasPrefix(b.topologyLine(), "NV18;0:0:X,NV18,"), b.stdout)
	assert.Empty(t, c.topologyLine(), "one GPU: no topology read")

	all := newTopoEnv(t, "nvswitch-8", 8).take(0, "8", "--topology", "connected")
	assert.Equal(t, "0,1,2,3,4,5,6,7", all.out)
	five := newTopoEnv(t, "nvswitch-8", 8).take(0, "5", "--topology", "connected")
	assert.Equal(t, "0,1,2,3,4", five.out)
}

// On the PCIe-only node a pair behind one switch (PIX: 1,2) comes before pairs across the sockets (SYS:
// 0,1), then the pair below one upper switch (PXB: 0,3).
func TestTopologyPCIeOnly(t *testing.T) {
	e := newTopoEnv(t, "pcie-4", 4)
	a := e.take(0, "2")
	assert.Equal(t, "1,2", a.out)
	assert.True(t, strings.HasPrefix(a.topologyLine(), "PIX;"), a.stdout)
	assert.Empty(t, a.stderr)
	b := e.take(1, "2")
	assert.Equal(t, "0,3", b.out)
	assert.True(t, strings.HasPrefix(b.topologyLine(), "PXB/PIX;"), "worse than the node's best pair: %s", b.stdout)

	c := newTopoEnv(t, "pcie-4", 4).startOwner(0, "2", "--no-coordination", "--topology", "connected")
	c.end()
	assert.Equal(t, 1, c.rc)
	assert.Contains(t, c.stderr, "no NVLink-connected set of 2 GPUs is free (--topology connected)")
	assert.Contains(t, c.stderr, "the best free set [1,2] is linked by PIX at worst")
}

// One GPU, and a topology that cannot be read, choose exactly as --topology any (no topology read):
// the same GPUs in the same order. Each machine has GPU 1 taken first, so the first free GPUs (0,2,...)
// differ from the island the topology would give (0,4,...). A topo -m that fails, hangs, prints too
// much or prints a matrix with a cell no driver prints never fails discovery: a warning says why.
func TestTopologyUnreadableChoosesAsWithout(t *testing.T) {
	choose := func(topo, amount string, extra ...string) *owner {
		e := newTopoEnv(t, topo, 8)
		assert.Equal(t, "1", e.withEnv("CUDA_VISIBLE_DEVICES=1").take(0, "1").out)
		return e.take(1, amount, extra...)
	}
	without := choose("islands-2x4", "2", "--topology", "any")
	assert.Equal(t, "0,2", without.out)
	assert.Empty(t, without.stderr)
	assert.Empty(t, without.topologyLine())
	assert.Equal(t, "0,4", choose("islands-2x4", "2").out, "the topology makes a difference here")

	one := choose("islands-2x4", "1")
	assert.Equal(t, choose("islands-2x4", "1", "--topology", "any").out, one.out)
	assert.Equal(t, "0", one.out)
	assert.Empty(t, one.stderr)
	assert.Empty(t, one.topologyLine())

	for topo, why := range map[string]string{
		"fail": `nvidia-smi topo -m failed (exit status 9): "Failed to get the topology: unknown error (fake)"`,
		"huge": "nvidia-smi topo -m printed more than 65536 bytes",
		"odd":  `nvidia-smi topo -m has the link "NVLINK?" between GPU3 and GPU2, none of NV#, PIX, PXB, PHB, NODE, SYS`,
		"hang": "nvidia-smi topo -m gave no answer within 5 s",
	} {
		for _, flag := range []string{"prefer", "connected"} {
			if topo == "hang" && flag == "connected" {
				continue // one 5 s wait is enough
			}
			o := choose(topo, "2", "--topology", flag)
			assert.Equal(t, without.out, o.out, "%s, --topology %s", topo, flag)
			assert.Equal(t, without.stdout, o.stdout, "%s: no topology line", topo)
			assert.Contains(t, o.stderr, "warning: GPU topology not used: "+why+"; the GPUs are chosen without it", topo)
			if flag == "connected" {
				assert.Contains(t, o.stderr, "so --topology connected cannot be kept", topo)
			}
			assert.Equal(t, 1, strings.Count(o.stderr, "\n"), "%s: one bounded line: %q", topo, o.stderr)
		}
	}

	// --topology any does not even run topo -m: a hanging one costs nothing and says nothing.
	o := choose("hang", "2", "--topology", "any")
	assert.Equal(t, without.out, o.out)
	assert.Empty(t, o.stderr)
}

// A --topology the script does not know fails before anything is claimed.
func TestTopologyBadFlagValue(t *testing.T) {
	e := newTopoEnv(t, "islands-2x4", 8)
	o := e.startOwner(0, "2", "--enable-coordination", "--coordination-dir", e.coord, "--topology", "nvlink")
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, `--topology "nvlink" is not one of connected, prefer (the default), wait, any`)
	assert.Empty(t, e.claimRecords())
}

func TestParseTopologyLine(t *testing.T) {
	top, err := ParseTopologyLine("PIX;0:0:X,SYS;1:-:SYS,X")
	require.NoError(t, err)
	assert.Equal(t, Topology{Link: "PIX", GPUs: []TopologyGPU{{Index: "0", NUMA: "0", Links: []string{"X", "SYS"}}, {Index: "1", NUMA: "-", Links: []string{"SYS", "X"}}}}, top)
	assert.Equal(t, []string{"      GPU0  GPU1  NUMA", "GPU0  X     SYS   0", "GPU1  SYS   X     -"}, TopologyLines(top))

	worse, err := ParseTopologyLine("SYS/NV12;0:0:X,SYS;1:-:SYS,X")
	require.NoError(t, err)
	assert.Equal(t, "SYS", worse.Link)
	assert.Equal(t, "NV12", worse.Best, "prefer took a set worse than the node's best")

	for line, why := range map[string]string{
		"SYS/;0:0:X,SYS;1:0:SYS,X":    `the link "" is none of`,
		"SYS/X;0:0:X,SYS;1:0:SYS,X":   `the link "X" is none of`,
		"SYS/NVL;0:0:X,SYS;1:0:SYS,X": `the link "NVL" is none of`,
		"":                            `the link "" is none of`,
		"X;0:0:X,SYS;1:0:SYS,X":       `the link "X" is none of`,
		"NV4;0:0:X":                   "1 GPUs; want 2 to 64",
		"NV4;0:0:X,NV4;0:0:NV4,X":     "GPU 2 is not <distinct index>:<NUMA node or ->:<links>",
		"NV4;0:zero:X,NV4;1:0:NV4,X":  "GPU 1 is not",
		"NV4;0:0:X,NV4;1:0:NV4":       "GPU 1 has 1 links, not 2",
		"NV4;0:0:X,NV4;1:0:NV4,NV4":   `GPU 1 has the link "NV4" at 2`,
		"NV4;0:0:X,NV4;1:0:NV4,\x1b[": `GPU 1 has the link "\x1b[" at 2`,
		"NV4;0:0:X,NV4;1:0:NVLINK,X":  `GPU 1 has the link "NVLINK" at 1`,
	} {
		_, err := ParseTopologyLine(line)
		require.Error(t, err, line)
		assert.Contains(t, err.Error(), why, line)
	}
	_, err = ParseTopologyLine("NV4" + strings.Repeat(";0:0:X", 100))
	assert.ErrorContains(t, err, "100 GPUs; want 2 to 64")
}
