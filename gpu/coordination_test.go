package gpu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests run the real built-in script (as embedded in the binary) against the fake nvidia-smi.

const fakeSMIDir = "../testdata/fake-nvidia-smi"

// coordEnv is a machine with gpus fake GPUs, the built-in NVIDIA script written out and an empty
// coordination directory of its own (mode 0700, owned by the test's user).
type coordEnv struct {
	t      *testing.T
	script string
	coord  string // the coordination directory
	dir    string
	env    []string
}

func newCoordEnv(t *testing.T, gpus int) *coordEnv {
	t.Helper()
	dir := t.TempDir()
	script, err := WriteBuiltinScript(filepath.Join(dir, "scripts"), VendorNVIDIA)
	require.NoError(t, err)
	smi, err := filepath.Abs(fakeSMIDir)
	require.NoError(t, err)
	env := []string{
		"PATH=" + smi + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKE_GPU_COUNT=" + strconv.Itoa(gpus),
		"NM_HOST=", // not in a YARN container: one set of claims
	}
	coord := filepath.Join(dir, "coordination")
	require.NoError(t, os.Mkdir(coord, 0o700))
	return &coordEnv{t: t, script: script, coord: coord, dir: dir, env: env}
}

// owner is a long-lived process that ran the discovery script once (as its caller, so it owns the
// claims) and stays alive until end is called.
type owner struct {
	pid     int
	rc      int
	out     string // first stdout line of the script
	stderr  string
	errFile string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
}

// ownerProg runs the script as a child (bash forks because more commands follow), reports its exit
// code and then waits for stdin to close, so the bash process (the script's $PPID) lives on. A line
// "release" on stdin makes it run the script's release mode first (as its caller, the claims' owner),
// writing the exit code and the output to $OWNER_STDERR.release.
const ownerProg = `"$@" 2>"$OWNER_STDERR"; echo "rc=$?"; read -r line
if [[ $line == release ]]; then "$1" --release --coordination-dir "$OWNER_COORD" >"$OWNER_STDERR.release" 2>&1; echo "rc=$?" >>"$OWNER_STDERR.release"; fi`

func (e *coordEnv) startOwner(i int, args ...string) *owner {
	e.t.Helper()
	return e.startOwnerAs(nil, i, args...)
}

// startOwnerAs is startOwner with the owner (and so the script) running as user u (nil: as this
// process's user), through setpriv.
func (e *coordEnv) startOwnerAs(u *osUser, i int, args ...string) *owner {
	e.t.Helper()
	errFile := filepath.Join(e.dir, fmt.Sprintf("stderr-%d-%d", i, len(args)))
	argv := append([]string{"bash", "-c", ownerProg, "owner", e.script}, args...)
	if u != nil {
		// The owner writes its stderr file as u: create it for u first (e.dir is root's).
		for _, f := range []string{errFile, errFile + ".release"} {
			require.NoError(e.t, os.WriteFile(f, nil, 0o600))
			require.NoError(e.t, os.Chown(f, u.uid, u.gid))
		}
		argv = append(u.setpriv(), argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), e.env...), "OWNER_STDERR="+errFile, "OWNER_COORD="+e.coord)
	stdin, err := cmd.StdinPipe()
	require.NoError(e.t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(e.t, err)
	require.NoError(e.t, cmd.Start())
	o := &owner{pid: cmd.Process.Pid, cmd: cmd, stdin: stdin, errFile: errFile}
	sc := bufio.NewScanner(stdout)
	var lines []string
	for sc.Scan() {
		l := sc.Text()
		if rc, ok := strings.CutPrefix(l, "rc="); ok {
			o.rc, err = strconv.Atoi(rc)
			require.NoError(e.t, err)
			break
		}
		lines = append(lines, l)
	}
	if len(lines) > 0 {
		o.out = lines[0]
	}
	data, _ := os.ReadFile(errFile)
	o.stderr = string(data)
	return o
}

func (o *owner) end() {
	_ = o.stdin.Close()
	_ = o.cmd.Wait()
}

// release makes the owner run the script's release mode and exit; it returns "<output>rc=<exit code>\n".
func (o *owner) release(t *testing.T) string {
	t.Helper()
	_, err := io.WriteString(o.stdin, "release\n")
	require.NoError(t, err)
	o.end()
	data, err := os.ReadFile(o.errFile + ".release")
	require.NoError(t, err)
	return string(data)
}

func (o *owner) indexes() []string {
	if o.out == "" {
		return nil
	}
	return strings.Split(o.out, ",")
}

// startOwners starts n owners at once, each asking for amount GPUs; even ones use
// --enable-coordination-mode, odd ones --enable-coordination (Flink's docs), so both spellings take part
// in the same protocol.
func (e *coordEnv) startOwners(n, amount int) []*owner {
	owners := make([]*owner, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			flag := "--enable-coordination-mode"
			if i%2 == 1 {
				flag = "--enable-coordination"
			}
			owners[i] = e.startOwner(i, strconv.Itoa(amount), flag, "--coordination-dir", e.coord)
		}()
	}
	wg.Wait()
	return owners
}

func endAll(owners []*owner) {
	for _, o := range owners {
		o.end()
	}
}

// ownFile is the claim file of the test's user in the coordination directory.
func (e *coordEnv) ownFile() string {
	return filepath.Join(e.coord, fmt.Sprintf("claims.%d", os.Getuid()))
}

// claimRecords parses every claim file of the coordination directory: index -> "pid starttime".
func (e *coordEnv) claimRecords() map[string]string {
	e.t.Helper()
	files, err := filepath.Glob(filepath.Join(e.coord, "claims.*"))
	require.NoError(e.t, err)
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		require.NoError(e.t, err)
		data = append(data, d...)
	}
	recs := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || strings.HasPrefix(l, "#") {
			continue
		}
		_, dup := recs[f[0]]
		require.False(e.t, dup, "index %s recorded twice in %q", f[0], data)
		recs[f[0]] = f[1] + " " + f[2]
	}
	return recs
}

// startTime reads field 22 of /proc/<pid>/stat, as the scripts do.
func startTime(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	s := string(data)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	require.Greater(t, len(f), 19)
	return f[19]
}

// checkRound asserts that exactly wantOK owners got amount distinct GPUs each, that no GPU went to two
// of them, that the others failed with the "not enough" message, and that the coordination file records
// exactly the winners' claims with their pid and start time.
func (e *coordEnv) checkRound(owners []*owner, amount, wantOK int) []*owner {
	t := e.t
	t.Helper()
	var winners []*owner
	holder := map[string]int{}
	for _, o := range owners {
		if o.rc != 0 {
			assert.Empty(t, o.out, "a failing discovery printed indexes")
			assert.Contains(t, o.stderr, "not enough GPUs: found 8 NVIDIA GPU(s) [0,1,2,3,4,5,6,7], asked for "+strconv.Itoa(amount))
			assert.Contains(t, o.stderr, "taken (coordination directory "+e.coord+"):")
			continue
		}
		winners = append(winners, o)
		idx := o.indexes()
		require.Len(t, idx, amount, "owner %d printed %q", o.pid, o.out)
		for _, g := range idx {
			prev, taken := holder[g]
			require.False(t, taken, "GPU %s given to live owners %d and %d", g, prev, o.pid)
			holder[g] = o.pid
		}
	}
	require.Len(t, winners, wantOK, "owners that got GPUs")
	recs := e.claimRecords()
	require.Len(t, recs, len(holder))
	for g, pid := range holder {
		assert.Equal(t, fmt.Sprintf("%d %s", pid, startTime(t, pid)), recs[g], "record of GPU %s", g)
	}
	return winners
}

func TestCoordinationConcurrentOwners(t *testing.T) {
	e := newCoordEnv(t, 8)

	// 32 owners, 1 GPU each: exactly 8 win.
	first := e.startOwners(32, 1)
	winners := e.checkRound(first, 1, 8)
	assert.ElementsMatch(t, []string{"0", "1", "2", "3", "4", "5", "6", "7"}, indexesOf(winners))

	// Every owner of round one exits: their claims are dead and the next callers reclaim them.
	endAll(first)
	second := e.startOwners(32, 2)
	winners = e.checkRound(second, 2, 4)
	assert.ElementsMatch(t, []string{"0", "1", "2", "3", "4", "5", "6", "7"}, indexesOf(winners))

	// One winner exits: exactly its two GPUs come back, to the next caller; nothing else is free.
	gone := winners[0]
	freed := gone.indexes()
	gone.end()
	next := e.startOwner(100, "2", "--enable-coordination", "--coordination-dir", e.coord)
	defer next.end()
	require.Equal(t, 0, next.rc, next.stderr)
	assert.ElementsMatch(t, freed, next.indexes())
	late := e.startOwner(101, "1", "--enable-coordination-mode", "--coordination-dir", e.coord)
	defer late.end()
	assert.Equal(t, 1, late.rc)
	assert.Contains(t, late.stderr, "asked for 1, 0 free")
	assert.Contains(t, late.stderr, fmt.Sprintf("%s by pid %d", freed[0], next.pid))
	endAll(second)
}

func indexesOf(owners []*owner) []string {
	var all []string
	for _, o := range owners {
		all = append(all, o.indexes()...)
	}
	sort.Strings(all)
	return all
}

func TestCoordinationReusedPidCannotHoldGPU(t *testing.T) {
	e := newCoordEnv(t, 8)
	self := os.Getpid()
	st, err := strconv.ParseUint(startTime(t, self), 10, 64)
	require.NoError(t, err)

	// A live process (this test) whose pid is recorded with another start time: the record belongs to a
	// dead process whose pid was reused, so all 8 GPUs are free.
	var b strings.Builder
	for g := range 8 {
		fmt.Fprintf(&b, "%d %d %d\n", g, self, st+1)
	}
	require.NoError(t, os.WriteFile(e.ownFile(), []byte(b.String()), 0o640))
	o := e.startOwner(0, "8", "--enable-coordination-mode", "--coordination-dir", e.coord)
	o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	assert.Equal(t, "0,1,2,3,4,5,6,7", o.out)

	// The same record with the right start time is a live claim: the GPU is not free.
	require.NoError(t, os.WriteFile(e.ownFile(), fmt.Appendf(nil, "3 %d %d\n", self, st), 0o640))
	o = e.startOwner(1, "8", "--enable-coordination", "--coordination-dir", e.coord)
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, fmt.Sprintf("asked for 8, 7 free; taken (coordination directory %s): 3 by pid %d", e.coord, self))
	o = e.startOwner(2, "7", "--enable-coordination", "--coordination-dir", e.coord)
	o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	assert.Equal(t, "0,1,2,4,5,6,7", o.out)
}

func TestCoordinationIndexMatchingIsExact(t *testing.T) {
	e := newCoordEnv(t, 8)
	self := os.Getpid()
	st := startTime(t, self)
	// Live claims on 10 and 11 (another machine's numbering, or a stale file) must not block 1 or 0.
	require.NoError(t, os.WriteFile(e.ownFile(), fmt.Appendf(nil, "10 %d %s\n11 %d %s\ngarbage line\n", self, st, self, st), 0o640))
	o := e.startOwner(0, "8", "--enable-coordination-mode", "--coordination-dir", e.coord)
	defer o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	assert.Equal(t, "0,1,2,3,4,5,6,7", o.out)
	recs := e.claimRecords()
	assert.Len(t, recs, 10, "the live claims on 10 and 11 stay, the garbage line goes")
	assert.Equal(t, fmt.Sprintf("%d %s", self, st), recs["10"])
}

func TestCoordinationUnknownArgumentFails(t *testing.T) {
	e := newCoordEnv(t, 8)
	o := e.startOwner(0, "1", "--enable-cordination")
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, `unknown argument "--enable-cordination"; valid: <amount> [--enable-coordination-mode|--enable-coordination] [--coordination-dir DIR] [--lock-timeout SECONDS] [--release]`)
}

// A --coordination-dir that does not exist is created private to the caller (mode 0700); the default
// directory is not (an administrator creates it shared) and its absence is an error that says how.
func TestCoordinationDirCreatedOnlyWhenNamed(t *testing.T) {
	e := newCoordEnv(t, 2)
	dir := filepath.Join(e.dir, "mine")
	o := e.startOwner(0, "1", "--enable-coordination", "--coordination-dir", dir)
	defer o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	st, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, st.Mode())

	if _, err := os.Lstat(DefaultCoordinationDir); err == nil {
		t.Fatalf("%s exists on this machine: this test needs it absent", DefaultCoordinationDir)
	}
	o = e.startOwner(1, "1", "--enable-coordination")
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, "coordination directory /var/lib/yarn-am/gpu does not exist; an administrator creates it once per node: install -d -m 3770 -o root -g <group of the users running containers> /var/lib/yarn-am/gpu")
	_, err = os.Lstat(DefaultCoordinationDir)
	assert.True(t, os.IsNotExist(err), "the default directory was created")
}

// Claims are kept per NodeManager (NM_HOST): the mini cluster's NodeManagers share a machine but model
// separate hosts, each with its own GPUs.
func TestCoordinationPerNodeManager(t *testing.T) {
	e := newCoordEnv(t, 2)
	start := func(i int, host string) *owner {
		saved := e.env
		e.env = append(append([]string(nil), saved...), "NM_HOST="+host)
		defer func() { e.env = saved }()
		return e.startOwner(i, "2", "--enable-coordination", "--coordination-dir", e.coord)
	}
	a := start(0, "nm-1.example")
	defer a.end()
	b := start(1, "nm-2.example")
	defer b.end()
	require.Equal(t, 0, a.rc, a.stderr)
	require.Equal(t, 0, b.rc, b.stderr)
	assert.Equal(t, "0,1", a.out)
	assert.Equal(t, "0,1", b.out)
	c := start(2, "nm-1.example")
	defer c.end()
	assert.Equal(t, 1, c.rc)
	assert.Contains(t, c.stderr, fmt.Sprintf("asked for 2, 0 free; taken (coordination directory %s): 0 by pid %d, 1 by pid %d", e.coord, a.pid, a.pid))
	uid := strconv.Itoa(os.Getuid())
	for _, f := range []string{"claims." + uid + "@nm-1.example", "claims." + uid + "@nm-2.example"} {
		_, err := os.Stat(filepath.Join(e.coord, f))
		assert.NoError(t, err)
	}
	d := start(3, "bad host;rm")
	defer d.end()
	assert.Equal(t, 1, d.rc)
	assert.Contains(t, d.stderr, `NM_HOST "bad host;rm" is not a host name (letters, digits, . _ -)`)
}
