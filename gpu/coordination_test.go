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
	"syscall"
	"testing"
	"time"

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
	stdout  string // all of it
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

// errFile is where owner i started with args writes the script's stderr.
func (e *coordEnv) errFile(i int, args []string) string {
	return filepath.Join(e.dir, fmt.Sprintf("stderr-%d-%d", i, len(args)))
}

func (e *coordEnv) startOwner(i int, args ...string) *owner {
	e.t.Helper()
	return e.startOwnerAs(nil, i, args...)
}

// startOwnerAs is startOwner with the owner (and so the script) running as user u (nil: as this
// process's user), through setpriv.
func (e *coordEnv) startOwnerAs(u *osUser, i int, args ...string) *owner {
	e.t.Helper()
	errFile := e.errFile(i, args)
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
		o.stdout = strings.Join(lines, "\n") + "\n"
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

// ownFile is a claim file of the test's user in the coordination directory, named as version 2 named
// them (still read).
func (e *coordEnv) ownFile() string {
	return filepath.Join(e.coord, fmt.Sprintf("claims.%d", os.Getuid()))
}

// fakeUUIDs runs the fake nvidia-smi with env and returns each index's UUID.
func fakeUUIDs(t *testing.T, env []string) map[string]string {
	t.Helper()
	smi := "nvidia-smi"
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			smi = filepath.Join(strings.Split(p, ":")[0], "nvidia-smi")
		}
	}
	cmd := exec.Command(smi, "--query-gpu=index,uuid", "--format=csv,noheader")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	require.NoError(t, err)
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		idx, uuid, ok := strings.Cut(l, ", ")
		require.True(t, ok, l)
		m[idx] = uuid
	}
	return m
}

// claimRecords parses every claim file of the coordination directory: index -> "pid starttime" (claims
// by UUID are mapped back to the index of the fake GPU with that UUID).
func (e *coordEnv) claimRecords() map[string]string {
	e.t.Helper()
	byUUID := map[string]string{}
	for idx, u := range fakeUUIDs(e.t, e.env) {
		byUUID["uuid:"+u] = idx
	}
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
		if len(f) != 3 || strings.HasPrefix(l, "#") || f[0] == "sick" {
			continue // a sick mark is no claim (sick_test.go)
		}
		if idx, ok := byUUID[f[0]]; ok {
			f[0] = idx
		} else {
			f[0] = strings.TrimPrefix(f[0], "index:")
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
	assert.Contains(t, o.stderr, `unknown argument "--enable-cordination"; valid: <amount> [--enable-coordination-mode|--enable-coordination|--no-coordination] [--coordination-dir DIR|--coordination-file FILE] [--lock-timeout SECONDS] [--topology connected|prefer|wait|any] [--release | --mark-sick UUID]`)
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
	for _, f := range []string{"claims." + uid + "@nm-1.example.*", "claims." + uid + "@nm-2.example.*"} {
		files, err := filepath.Glob(filepath.Join(e.coord, f))
		require.NoError(t, err)
		assert.Len(t, files, 1, f)
	}
	d := start(3, "bad host;rm")
	defer d.end()
	assert.Equal(t, 1, d.rc)
	assert.Contains(t, d.stderr, `NM_HOST "bad host;rm" is not a host name (letters, digits, . _ -)`)
}

// withEnv returns a copy of e whose scripts run with extra environment variables.
func (e *coordEnv) withEnv(kv ...string) *coordEnv {
	c := *e
	c.env = append(append([]string(nil), e.env...), kv...)
	return &c
}

// yarnContainer is e as seen from a YARN container: CONTAINER_ID set and YARN's per-user directory of the
// node (LOCAL_USER_DIRS) a directory of the test's user. It returns the private coordination directory
// the script uses there.
func (e *coordEnv) yarnContainer(t *testing.T) (*coordEnv, string) {
	t.Helper()
	base := filepath.Join(e.dir, "nm-local", "usercache", "user")
	require.NoError(t, os.MkdirAll(base, 0o750))
	return e.withEnv("CONTAINER_ID=container_1_0001_01_000002", "LOCAL_USER_DIRS="+base+"/"), filepath.Join(base, "yarn-am-gpu")
}

// Where the claims go: a named directory is created private; in a YARN container without the shared
// /var/lib/yarn-am/gpu, coordination is on by default in the user's private directory (YARN's per-user
// directory of the node), saying once that it covers only the user's own containers; an explicit
// --enable-coordination works there too (it used to fail every TaskExecutor, exit 90); outside YARN the
// default is no coordination; --no-coordination turns it off.
func TestCoordinationPlaces(t *testing.T) {
	if _, err := os.Lstat(DefaultCoordinationDir); err == nil {
		t.Fatalf("%s exists on this machine: this test needs it absent", DefaultCoordinationDir)
	}
	e := newCoordEnv(t, 2)
	dir := filepath.Join(e.dir, "mine")
	o := e.startOwner(0, "1", "--enable-coordination", "--coordination-dir", dir)
	defer o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	st, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, st.Mode())

	y, private := e.yarnContainer(t)
	const once = "warning: GPU coordination covers only uid 0's own containers on this node (in "
	for i, args := range [][]string{{"1"}, {"1", "--enable-coordination"}} {
		o := y.startOwner(10+i, args...)
		defer o.end()
		require.Equal(t, 0, o.rc, "%v: %s", args, o.stderr)
		assert.Equal(t, strconv.Itoa(i), o.out, "%v: the second container gets the other GPU", args)
		if i == 0 {
			assert.Contains(t, o.stderr, once+private+"): /var/lib/yarn-am/gpu does not exist")
		} else {
			assert.NotContains(t, o.stderr, once, "said once per node and user")
		}
	}
	st, err = os.Lstat(private)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|0o700, st.Mode())
	files, err := filepath.Glob(filepath.Join(private, "claims.*"))
	require.NoError(t, err)
	assert.Len(t, files, 1, "one claim file of the user")
	full := y.startOwner(12, "1")
	full.end()
	assert.Equal(t, 1, full.rc)
	assert.Contains(t, full.stderr, "asked for 1, 0 free; taken (coordination directory "+private+")")
	off := y.startOwner(13, "2", "--no-coordination")
	off.end()
	require.Equal(t, 0, off.rc, off.stderr)
	assert.Equal(t, "0,1", off.out, "--no-coordination hands out GPUs without claims")

	// Outside a YARN container no flag means no coordination: 'yarn-am discover' shows the first GPUs.
	a := e.withEnv("CONTAINER_ID=").startOwner(14, "2")
	defer a.end()
	require.Equal(t, 0, a.rc, a.stderr)
	assert.Equal(t, "0,1", a.out)
	assert.Empty(t, a.stderr)
}

// Flink's --coordination-file FILE: FILE.d when FILE's directory is writable by no other user (then no
// one can take the name first); in a directory others can write (Flink's default is in /var/tmp) the
// claims go to the user's private directory instead, with a warning. It used to be refused.
func TestCoordinationFileOfFlink(t *testing.T) {
	e := newCoordEnv(t, 2)
	y, private := e.yarnContainer(t)
	safe := filepath.Join(e.dir, "flink")
	require.NoError(t, os.Mkdir(safe, 0o755))
	o := y.startOwner(0, "1", "--coordination-file", safe+"/gpu-coordination")
	defer o.end()
	require.Equal(t, 0, o.rc, o.stderr)
	files, err := filepath.Glob(filepath.Join(safe, "gpu-coordination.d", "claims.*"))
	require.NoError(t, err)
	assert.Len(t, files, 1)
	o2 := y.startOwner(1, "1", "--enable-coordination", "--coordination-file="+safe+"/gpu-coordination")
	defer o2.end()
	require.Equal(t, 0, o2.rc, o2.stderr)
	assert.Equal(t, "1", o2.out)

	shared := filepath.Join(e.dir, "vartmp")
	require.NoError(t, os.Mkdir(shared, 0o700))
	require.NoError(t, os.Chmod(shared, os.ModeSticky|0o777))
	o3 := y.startOwner(2, "2", "--coordination-file", shared+"/flink-gpu-coordination")
	defer o3.end()
	require.Equal(t, 0, o3.rc, o3.stderr)
	assert.Contains(t, o3.stderr, "--coordination-file "+shared+"/flink-gpu-coordination: its directory is writable by other users (or not by you), so a name there could be taken first by someone else; the claims go to "+private+" instead")
	assert.NoFileExists(t, shared+"/flink-gpu-coordination")
	assert.NoDirExists(t, shared+"/flink-gpu-coordination.d")
	files, err = filepath.Glob(filepath.Join(private, "claims.*"))
	require.NoError(t, err)
	assert.Len(t, files, 1)
}

// Under YARN's GPU isolation every container sees its GPUs from index 0 (the fake nvidia-smi's
// FAKE_GPU_HOST_INDEXES). Claims are by UUID: two containers holding different GPUs both get "their"
// index 0 (index claims made the second fail), and two that see the same GPU do not both get it. The
// UUIDs come with the indexes.
func TestCoordinationByUUIDUnderIsolation(t *testing.T) {
	e := newCoordEnv(t, 0)
	a := e.withEnv("FAKE_GPU_HOST_INDEXES=5").startOwner(0, "1", "--enable-coordination", "--coordination-dir", e.coord)
	defer a.end()
	b := e.withEnv("FAKE_GPU_HOST_INDEXES=7").startOwner(1, "1", "--enable-coordination", "--coordination-dir", e.coord)
	defer b.end()
	require.Equal(t, 0, a.rc, a.stderr)
	require.Equal(t, 0, b.rc, b.stderr)
	assert.Equal(t, "0", a.out)
	assert.Equal(t, "0", b.out)
	same := e.withEnv("FAKE_GPU_HOST_INDEXES=7").startOwner(2, "1", "--enable-coordination", "--coordination-dir", e.coord)
	same.end()
	assert.Equal(t, 1, same.rc)
	assert.Contains(t, same.stderr, fmt.Sprintf("asked for 1, 0 free; taken (coordination directory %s): 0 by pid %d", e.coord, b.pid))

	// The second stdout line carries the UUIDs (the driver puts them into the infos the AM gets).
	uuid7 := fakeUUIDs(t, e.withEnv("FAKE_GPU_HOST_INDEXES=7").env)["0"]
	require.True(t, strings.HasPrefix(uuid7, "GPU-"), uuid7)
	data, err := os.ReadFile(b.errFile)
	require.NoError(t, err)
	assert.Empty(t, string(data))
	out, err := exec.Command("bash", "-c", `env "$@" bash "$0" 1 --no-coordination`, e.script, "PATH="+strings.Split(e.env[0], "=")[1], "FAKE_GPU_HOST_INDEXES=7").Output()
	require.NoError(t, err)
	assert.Equal(t, "0\nuuids="+uuid7+"\n", string(out))

	// Without UUIDs (FAKE_GPU_NO_UUID) the script claims by index, and says nothing about UUIDs.
	n := newCoordEnv(t, 2).withEnv("FAKE_GPU_NO_UUID=1")
	c := n.startOwner(3, "1", "--enable-coordination", "--coordination-dir", n.coord)
	defer c.end()
	require.Equal(t, 0, c.rc, c.stderr)
	files, err := filepath.Glob(filepath.Join(n.coord, "claims.*"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	data, err = os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Contains(t, string(data), fmt.Sprintf("\nindex:0 %d ", c.pid))
}

// Hostile claim files planted in the coordination directory: each made every later discovery on the
// node fail (or, the big ones, run past every lock timeout). Now each is skipped with a warning naming
// it, and discovery goes on, within seconds.
func TestCoordinationSkipsInvalidClaimFiles(t *testing.T) {
	const other = 12345 // a uid that is not the test's
	me := os.Getuid()
	for _, tc := range []struct {
		name   string
		plant  func(t *testing.T, dir string) string // returns the planted path
		reason string
	}{
		{"symbolic link at the caller's name", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, fmt.Sprintf("claims.%d", me))
			require.NoError(t, os.Symlink("/etc/passwd", p))
			require.NoError(t, os.Lchown(p, other, other))
			return p
		}, "it is not a regular file (type l)"},
		{"the caller's name taken first by another user", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, fmt.Sprintf("claims.%d", me))
			require.NoError(t, os.WriteFile(p, []byte("0 1 1\n"), 0o640))
			require.NoError(t, os.Lchown(p, other, other))
			return p
		}, fmt.Sprintf("it is owned by uid %d, not by uid %d as its name says", other, me)},
		{"a named pipe", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, fmt.Sprintf("claims.%d", other))
			require.NoError(t, syscall.Mkfifo(p, 0o640))
			require.NoError(t, os.Lchown(p, other, other))
			return p
		}, "it is not a regular file (type p)"},
		{"11,000 claim lines", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, fmt.Sprintf("claims.%d", other))
			var b strings.Builder
			for i := range 11000 {
				fmt.Fprintf(&b, "%d 1 1\n", i%8) // pid 1 is alive: every line used to cost a /proc lookup
			}
			require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o640))
			require.NoError(t, os.Lchown(p, other, other))
			return p
		}, "it is larger than 16384 bytes (66000)"},
		{"many claims in few bytes", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, fmt.Sprintf("claims.%d", other))
			require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("0 1 1\n", 65)), 0o640))
			require.NoError(t, os.Lchown(p, other, other))
			return p
		}, "it holds more than 64 claims"},
		{"many files of one user", func(t *testing.T, dir string) string {
			var p string
			for i := range 6 {
				p = filepath.Join(dir, fmt.Sprintf("claims.%d@.AAAAAAA%d", other, i))
				require.NoError(t, os.WriteFile(p, nil, 0o640))
				require.NoError(t, os.Lchown(p, other, other))
			}
			return p
		}, fmt.Sprintf("uid %d has 6 claim files for this node, more than 4", other)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCoordEnv(t, 2)
			planted := tc.plant(t, e.coord)
			start := time.Now()
			o := e.startOwner(0, "1", "--enable-coordination", "--coordination-dir", e.coord, "--lock-timeout", "5")
			defer o.end()
			assert.Less(t, time.Since(start), 20*time.Second, "gives up within 20 seconds")
			require.Equal(t, 0, o.rc, o.stderr)
			assert.Equal(t, "0", o.out)
			assert.Contains(t, o.stderr, "warning: skipped claim file "+planted+": "+tc.reason+"; its claims are ignored")
			// The caller's claim is in a file of its own, under a name no one could take first.
			files, err := filepath.Glob(filepath.Join(e.coord, fmt.Sprintf("claims.%d@.*", me)))
			require.NoError(t, err)
			require.Len(t, files, 1)
			assert.Regexp(t, `/claims\.[0-9]+@\.[A-Za-z0-9]{8}$`, files[0])
			// And the next caller sees that claim.
			o2 := e.startOwner(1, "2", "--enable-coordination", "--coordination-dir", e.coord)
			o2.end()
			assert.Equal(t, 1, o2.rc)
			assert.Contains(t, o2.stderr, fmt.Sprintf("asked for 2, 1 free; taken (coordination directory %s): 0 by pid %d", e.coord, o.pid))
			_, err = os.Lstat(planted)
			assert.NoError(t, err, "another user's file is left alone")
		})
	}
}
