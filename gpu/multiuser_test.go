package gpu

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The multi-user coordination tests create real users and run the built-in script as them (setpriv),
// because what they show — what one user can and cannot do to another user's GPU claims — only exists
// between different uids. They need root and fail (never skip) without it.

// The names carry this test process's pid: test runs side by side on one machine (other checkouts)
// must not delete each other's users, and a user left over by a killed run must not be taken as set up.
var (
	runTag      = strconv.Itoa(os.Getpid() % 1000000)
	sharedGroup = "yamgpu-s" + runTag // the group of the coordination directory
	userA       = "yamgpu-a" + runTag // member
	userB       = "yamgpu-b" + runTag // member
	userC       = "yamgpu-c" + runTag // not a member
)

type osUser struct {
	name     string
	uid, gid int
}

// setpriv is the command prefix that runs a command as u with u's groups.
func (u *osUser) setpriv() []string {
	return []string{"setpriv", "--reuid=" + strconv.Itoa(u.uid), "--regid=" + strconv.Itoa(u.gid), "--init-groups", "--"}
}

// run runs a bash command line as u and returns its combined output and exit code.
func (u *osUser) run(t *testing.T, env []string, script string) (string, int) {
	t.Helper()
	argv := append(u.setpriv(), "bash", "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "running %q as %s", script, u.name)
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("%s creates users and a group (useradd, groupadd) and runs the discovery script as them (setpriv): run it as root, e.g. sudo go test -run %s ./gpu", t.Name(), t.Name())
	}
	for _, tool := range []string{"useradd", "userdel", "groupadd", "groupdel", "setpriv", "flock", "unshare", "mount"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s needs %s (Debian: passwd, util-linux)", t.Name(), tool)
	}
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", name, strings.Join(args, " "), out)
}

// createUsers creates the shared group, two members and one outsider, and removes them at the end.
func createUsers(t *testing.T) (a, b, c *osUser) {
	t.Helper()
	if _, err := user.LookupGroup(sharedGroup); err != nil {
		mustRun(t, "groupadd", sharedGroup)
	}
	mk := func(name string, member bool) *osUser {
		if _, err := user.Lookup(name); err != nil {
			args := []string{"--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin"}
			if member {
				args = append(args, "--groups", sharedGroup)
			}
			mustRun(t, "useradd", append(args, name)...)
		}
		u, err := user.Lookup(name)
		require.NoError(t, err)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &osUser{name: name, uid: uid, gid: gid}
	}
	t.Cleanup(func() {
		for _, n := range []string{userA, userB, userC} {
			_ = exec.Command("userdel", n).Run()
		}
		_ = exec.Command("groupdel", sharedGroup).Run()
	})
	return mk(userA, true), mk(userB, true), mk(userC, false)
}

// protectedRegular sets fs.protected_regular to 2 (O_CREAT of another user's file refused in sticky
// directories that are world- or group-writable, as on current distributions at level 1 and stricter)
// for the test, and restores the old value.
func protectedRegular(t *testing.T) {
	t.Helper()
	const knob = "/proc/sys/fs/protected_regular"
	old, err := os.ReadFile(knob)
	require.NoError(t, err, "this test sets %s to 2 to show the shared mode works under it", knob)
	require.NoError(t, os.WriteFile(knob, []byte("2\n"), 0o644), "this test sets %s to 2 to show the shared mode works under it; it needs a writable /proc/sys", knob)
	t.Cleanup(func() { _ = os.WriteFile(knob, old, 0o644) })
}

// newSharedCoordEnv is newCoordEnv readable by other users: the scripts and the fake nvidia-smi in a
// directory every user can traverse, and the coordination directory as an administrator creates it
// (install -d -m 3770 -o root -g yamgpu-shared).
func newSharedCoordEnv(t *testing.T, gpus int) (*coordEnv, int) {
	t.Helper()
	dir, err := os.MkdirTemp("", "yam-gpu-multiuser-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	script, err := WriteBuiltinScript(filepath.Join(dir, "scripts"), VendorNVIDIA)
	require.NoError(t, err)
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	smi, err := os.ReadFile(filepath.Join(fakeSMIDir, "nvidia-smi"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "nvidia-smi"), smi, 0o755))
	g, err := user.LookupGroup(sharedGroup)
	require.NoError(t, err)
	gid, _ := strconv.Atoi(g.Gid)
	coord := filepath.Join(dir, "coord")
	require.NoError(t, os.Mkdir(coord, 0o700))
	require.NoError(t, os.Chown(coord, 0, gid))
	require.NoError(t, os.Chmod(coord, os.ModeSetgid|os.ModeSticky|0o770))
	env := []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "FAKE_GPU_COUNT=" + strconv.Itoa(gpus)}
	return &coordEnv{t: t, script: script, coord: coord, dir: dir, env: env}, gid
}

type fileID struct {
	data          string
	ino           uint64
	uid, gid      int
	mode          os.FileMode
	mtimeUnixNano int64
}

func statFile(t *testing.T, path string) fileID {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return fileID{data: string(data), ino: st.Ino, uid: int(st.Uid), gid: int(st.Gid), mode: fi.Mode(), mtimeUnixNano: fi.ModTime().UnixNano()}
}

// claimFile is u's one claim file in the coordination directory (named claims.<uid>@.<random>).
func claimFile(e *coordEnv, u *osUser) string {
	e.t.Helper()
	files, err := filepath.Glob(filepath.Join(e.coord, "claims."+strconv.Itoa(u.uid)+"@.*"))
	require.NoError(e.t, err)
	require.Len(e.t, files, 1, "claim files of %s", u.name)
	return files[0]
}

func TestCoordinationMultiUser(t *testing.T) {
	requireRoot(t)
	a, b, c := createUsers(t)
	protectedRegular(t)
	e, gid := newSharedCoordEnv(t, 4)
	coordArgs := func(amount int, extra ...string) []string {
		return append([]string{strconv.Itoa(amount), "--enable-coordination-mode", "--coordination-dir", e.coord}, extra...)
	}

	// Two members of the group get distinct GPUs; each user's claims are in its own file, mode 0640,
	// owned by the user, group of the directory.
	a1 := e.startOwnerAs(a, 1, coordArgs(2)...)
	defer a1.end()
	require.Equal(t, 0, a1.rc, a1.stderr)
	assert.Equal(t, "0,1", a1.out)
	b1 := e.startOwnerAs(b, 2, coordArgs(2)...)
	require.Equal(t, 0, b1.rc, b1.stderr)
	assert.Equal(t, "2,3", b1.out)
	fileA := claimFile(e, a)
	idA := statFile(t, fileA)
	uuids := fakeUUIDs(t, e.env)
	assert.Equal(t, fileID{data: fmt.Sprintf("# yarn-am gpu coordination v3: <gpu> <owner pid> <owner start time>\nuuid:%[3]s %[1]d %[2]s\nuuid:%[4]s %[1]d %[2]s\n", a1.pid, startTime(t, a1.pid), uuids["0"], uuids["1"]),
		ino: idA.ino, uid: a.uid, gid: gid, mode: 0o640, mtimeUnixNano: idA.mtimeUnixNano}, idA)
	idB := statFile(t, claimFile(e, b))
	assert.Equal(t, []int{b.uid, gid}, []int{idB.uid, idB.gid})
	assert.Equal(t, os.FileMode(0o640), idB.mode)
	o := e.startOwnerAs(b, 3, coordArgs(1)...)
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, fmt.Sprintf("asked for 1, 0 free; taken (coordination directory %s): 0 by pid %d, 1 by pid %d, 2 by pid %d, 3 by pid %d", e.coord, a1.pid, a1.pid, b1.pid, b1.pid))

	// With /proc mounted hidepid=2, A could not see B's processes and would take B's claims for dead:
	// the script refuses to coordinate, unless A is in the mount's gid= group (then it sees B's claims).
	for _, tc := range []struct{ opts, want string }{
		{"hidepid=2", "/proc is mounted with hidepid=invisible: this script cannot see other users' processes and would take their GPU claims for dead; coordination needs /proc without hidepid, or with gid=<the coordination directory's group>"},
		{"hidepid=2,gid=" + strconv.Itoa(c.gid), "/proc is mounted with hidepid=invisible,gid=" + strconv.Itoa(c.gid) + ": this script cannot see"},
		{"hidepid=2,gid=" + strconv.Itoa(gid), fmt.Sprintf("asked for 1, 0 free; taken (coordination directory %s): 0 by pid %d, 1 by pid %d, 2 by pid %d, 3 by pid %d", e.coord, a1.pid, a1.pid, b1.pid, b1.pid)},
	} {
		cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			`mount -t proc -o "$OPTS" proc /proc && exec "$@"`, "sh")
		cmd.Args = append(cmd.Args, append(a.setpriv(), "bash", e.script, "1", "--enable-coordination", "--coordination-dir", e.coord)...)
		cmd.Env = append(append(os.Environ(), e.env...), "OPTS="+tc.opts)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s: %s", tc.opts, out)
		assert.Contains(t, string(out), tc.want, tc.opts)
	}
	// Without a flag asking for coordination (the default in a YARN container), such a /proc makes the
	// script say that it cannot coordinate and hand out GPUs without claims, instead of failing the worker.
	hp := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", `mount -t proc -o hidepid=2 proc /proc && exec "$@"`, "sh")
	hp.Args = append(hp.Args, append(a.setpriv(), "bash", e.script, "1")...)
	hp.Env = append(append(os.Environ(), e.env...), "CONTAINER_ID=container_1_0001_01_000002", "LOCAL_USER_DIRS=")
	var hpOut, hpErr strings.Builder
	hp.Stdout, hp.Stderr = &hpOut, &hpErr
	require.NoError(t, hp.Run(), hpErr.String())
	assert.True(t, strings.HasPrefix(hpOut.String(), "0\nuuids=GPU-"), hpOut.String())
	assert.Contains(t, hpErr.String(), "warning: GPU coordination is off for this worker: /proc is mounted with hidepid=invisible")

	// B cannot wipe, truncate, replace or remove A's claim file (mode 0640, sticky directory).
	for _, attack := range []string{
		`: >"$F"`,
		`printf '' >>"$F"`,
		`rm -f "$F"`,
		`t=$(mktemp "$D/.x.XXXXXX") && mv -f -T "$t" "$F"`,
		`mv -f -T "` + claimFile(e, b) + `" "$F"`,
		`chmod 0666 "$F"`,
	} {
		out, rc := b.run(t, []string{"F=" + fileA, "D=" + e.coord}, attack)
		assert.NotEqual(t, 0, rc, "as %s: %s succeeded: %s", b.name, attack, out)
		assert.Equal(t, idA, statFile(t, fileA), "A's claim file changed by %s", attack)
	}
	// B's own file is still in place (the mv above failed), so B's claims are intact too.
	assert.Equal(t, idB, statFile(t, claimFile(e, b)))

	// B cannot make GPUs look taken with a process that is not B's: after B's owner exits, B writes
	// claims on the freed GPUs 2 and 3 for A's live owner process into B's own file; they are ignored,
	// and A gets GPUs 2 and 3.
	b1.end()
	forged := fmt.Sprintf("2 %[1]d %[2]s\n3 %[1]d %[2]s\n", a1.pid, startTime(t, a1.pid))
	out, rc := b.run(t, []string{"F=" + claimFile(e, b), "D=" + e.coord, "FORGED=" + forged},
		`t=$(mktemp "$D/.f.XXXXXX") && printf '%s' "$FORGED" >"$t" && chmod 0640 "$t" && mv -f -T "$t" "$F"`)
	require.Equal(t, 0, rc, out)
	a2 := e.startOwnerAs(a, 4, coordArgs(2)...)
	defer a2.end()
	require.Equal(t, 0, a2.rc, a2.stderr)
	assert.Equal(t, "2,3", a2.out)

	// A member holding the directory's lock delays discovery only up to --lock-timeout, with a message
	// naming the holder; a non-member cannot even open the directory to lock it.
	// flock -o: the lock stays with the flock process (holder's pid), not with its child sleep.
	holder := exec.Command(b.setpriv()[0], append(b.setpriv()[1:], "flock", "-o", e.coord, "sleep", "60")...)
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, holder.Start())
	stopHolder := func() { _ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); _ = holder.Wait() }
	defer stopHolder()
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile("/proc/locks")
		return strings.Contains(string(data), " "+strconv.Itoa(holder.Process.Pid)+" ")
	}, 10*time.Second, 20*time.Millisecond, "flock as %s did not take the lock", b.name)
	start := time.Now()
	o = e.startOwnerAs(a, 5, coordArgs(1, "--lock-timeout", "1")...)
	o.end()
	assert.Less(t, time.Since(start), 10*time.Second, "gives up within 10 seconds")
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, fmt.Sprintf("could not lock coordination directory %s within 1 s: held by pid %d (user %s); raise --lock-timeout or end the holder", e.coord, holder.Process.Pid, b.name))
	stopHolder()
	out, rc = c.run(t, nil, "flock -n "+e.coord+" true")
	assert.NotEqual(t, 0, rc, "a non-member locked the coordination directory: %s", out)
	assert.Contains(t, out, "Permission denied")
	o = e.startOwnerAs(c, 6, coordArgs(1)...)
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, fmt.Sprintf("cannot open coordination directory %s as uid %d", e.coord, c.uid))
	assert.Contains(t, o.stderr, "the users running containers must be members of its group; an administrator creates it once per node: install -d -m 3770 -o root -g <group of the users running containers> "+e.coord)

	// A symbolic link planted among the claim files is refused, and its target is left alone.
	target := filepath.Join(e.dir, "precious")
	require.NoError(t, os.WriteFile(target, []byte("do not truncate\n"), 0o666))
	require.NoError(t, os.Chmod(target, 0o666)) // writable by A: only the script's refusal protects it
	idTarget := statFile(t, target)
	// What a member plants among the claim files used to make every later discovery on the node fail
	// (or run past every lock timeout, the 11,000-line file): now each is skipped with a warning naming
	// it, the real claims still count (all four GPUs are A's here, so A finds none free), links are not
	// followed, and it takes seconds. The planted names include A's own (taken first), which A does not
	// need: A's claims are in a file under a name from mktemp.
	var big strings.Builder
	for i := range 11000 {
		fmt.Fprintf(&big, "%d %d %s\n", i%4, a1.pid, startTime(t, a1.pid))
	}
	bigFile := filepath.Join(e.dir, "big")
	require.NoError(t, os.WriteFile(bigFile, []byte(big.String()), 0o644))
	for i, tc := range []struct{ name, plant, reason string }{
		{"claims." + strconv.Itoa(c.uid), `ln -s "$T" "$P"`, "it is not a regular file (type l)"},
		{"claims." + strconv.Itoa(a.uid), `ln -s "$T" "$P"`, "it is not a regular file (type l)"},
		{"claims." + strconv.Itoa(a.uid), `echo "0 $$ 1" >"$P"`, fmt.Sprintf("it is owned by uid %d, not by uid %d as its name says", b.uid, a.uid)},
		{"claims." + strconv.Itoa(a.uid) + "@.BBBBBBBB", `echo "0 $$ 1" >"$P"`, fmt.Sprintf("it is owned by uid %d, not by uid %d as its name says", b.uid, a.uid)},
		{"claims." + strconv.Itoa(b.uid) + "@.CCCCCCCC", `mkfifo "$P"`, "it is not a regular file (type p)"},
		{"claims." + strconv.Itoa(b.uid), `cat "$BIG" >"$P"`, "it is larger than 16384 bytes"},
	} {
		planted := filepath.Join(e.coord, tc.name)
		out, rc = b.run(t, []string{"P=" + planted, "T=" + target, "BIG=" + bigFile}, tc.plant)
		require.Equal(t, 0, rc, out)
		start := time.Now()
		o = e.startOwnerAs(a, 20+i, coordArgs(1, "--lock-timeout", "5")...)
		o.end()
		assert.Less(t, time.Since(start), 20*time.Second, "gives up within 20 seconds")
		assert.Equal(t, 1, o.rc, tc.plant)
		assert.Contains(t, o.stderr, "warning: skipped claim file "+planted+": "+tc.reason, tc.plant)
		assert.Contains(t, o.stderr, fmt.Sprintf("asked for 1, 0 free; taken (coordination directory %s): 0 by pid %d, 1 by pid %d, 2 by pid %d, 3 by pid %d", e.coord, a1.pid, a1.pid, a2.pid, a2.pid), tc.plant)
		assert.Equal(t, idTarget, statFile(t, target))
		out, rc = b.run(t, []string{"P=" + planted}, `rm -f "$P"`)
		require.Equal(t, 0, rc, out)
	}
	fileA = claimFile(e, a)
	// A coordination directory given as a symbolic link is refused.
	link := filepath.Join(e.dir, "coord-link")
	require.NoError(t, os.Symlink(e.coord, link))
	for _, arg := range []string{link, link + "/", link + "//"} {
		o = e.startOwnerAs(a, 9, "1", "--enable-coordination", "--coordination-dir", arg)
		o.end()
		assert.Equal(t, 1, o.rc, arg)
		assert.Contains(t, o.stderr, "coordination directory "+link+" is a symbolic link; refusing it", arg)
	}

	// A directory every user can write, or a group-writable one without the sticky bit, is refused.
	for _, tc := range []struct {
		mode os.FileMode
		want string
	}{
		{os.ModeSticky | 0o777, "is writable by every user (mode 1777): anyone could remove or hold the claims; refusing it"},
		{os.ModeSetgid | os.ModeSticky | 0o777, "is writable by every user (mode 3777)"},
		{os.ModeSetgid | 0o770, "is group-writable without the sticky bit (mode 2770): a group member could remove other users' claim files; refusing it; fix: chmod 3770 " + e.coord},
	} {
		require.NoError(t, os.Chmod(e.coord, tc.mode))
		o = e.startOwnerAs(a, 10, coordArgs(1)...)
		o.end()
		assert.Equal(t, 1, o.rc, "mode %v", tc.mode)
		assert.Contains(t, o.stderr, "coordination directory "+e.coord+" "+tc.want)
	}
	require.NoError(t, os.Chmod(e.coord, os.ModeSetgid|os.ModeSticky|0o770))
	// Owned by another ordinary user: refused (that user could remove every claim).
	require.NoError(t, os.Chown(e.coord, b.uid, gid))
	o = e.startOwnerAs(a, 11, coordArgs(1)...)
	o.end()
	assert.Equal(t, 1, o.rc)
	assert.Contains(t, o.stderr, fmt.Sprintf("coordination directory %s is owned by uid %d, neither root nor you (uid %d)", e.coord, b.uid, a.uid))
	require.NoError(t, os.Chown(e.coord, 0, gid))
	require.NoError(t, os.Chmod(e.coord, os.ModeSetgid|os.ModeSticky|0o770))

	// Dead owners across users: once A's owners exit, B gets all four GPUs although A's file still
	// lists them, and B does not touch A's file. B's release empties (removes) B's own file.
	a1.end()
	a2.end()
	idA = statFile(t, fileA)
	b2 := e.startOwnerAs(b, 12, coordArgs(4)...)
	require.Equal(t, 0, b2.rc, b2.stderr)
	assert.Equal(t, "0,1,2,3", b2.out)
	assert.Equal(t, idA, statFile(t, fileA))
	// The fake's default topology (every pair PHB, NUMA node 0) follows the UUIDs (docs/gpus.md#topology-connected-sets).
	assert.Equal(t, "0,1,2,3\nuuids="+strings.Join([]string{uuids["0"], uuids["1"], uuids["2"], uuids["3"]}, ",")+"\n"+
		"topology=PHB;0:0:X,PHB,PHB,PHB;1:0:PHB,X,PHB,PHB;2:0:PHB,PHB,X,PHB;3:0:PHB,PHB,PHB,X\n", b2.stdout)
	assert.Equal(t, strings.Join([]string{uuids["0"], uuids["1"], uuids["2"], uuids["3"]}, ",")+"\nrc=0\n", b2.release(t), "the released GPUs")
	left, err := filepath.Glob(filepath.Join(e.coord, "claims."+strconv.Itoa(b.uid)+"*"))
	require.NoError(t, err)
	assert.Empty(t, left, "B's claim file is removed once it holds no claim")
}
