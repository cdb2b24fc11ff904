package flink

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/colinmarc/hdfs/v2"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/boundedread"
	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/jobfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// Class-data sharing (docs/flink.md#class-data-sharing). The first run of a Flink home (on a JDK)
// has no archive: its JobManager's JVM writes the names of the classes it loads as it loads them
// (flinkdist.CDS.ClassList), and when it has ended the driver has a JVM write an archive of those of
// them that the JDK and the home's jars hold (flinkdist.DumpArgs): the whole JobManager's life, its
// job's submission and scheduling included. The driver checks that the JVM maps it, and
// puts it into the user's cache on HDFS, never rewritten, named by the JVM identity
// (flinkdist.ArchiveName), its SHA-256, the application that made it and that application's record of
// both: cds/<home key>/<identity>.<sha256>.<application>.<record>.jsa.
//
// The record is what makes an archive trusted, not its name: anything in the user's containers
// (job code included) holds the user's HDFS token and can write a file of any name there, so an
// archive is used only if its record is an HMAC that only the user's own applications' drivers can
// make. The key is the user's, kept on the submitting machine (client.UserKey, "flink-cds"); each
// submit gives its application's driver a key of its own derived from it (cdsAppKey: HMAC of the
// application's id), in the AM's credentials as a driver's secret (secretCDSKey), which no
// TaskExecutor's credentials hold; the record is an HMAC under that key of the identity and the
// SHA-256 (cdsRecord). A later submit of the same home lists the archives there (StageRemote),
// checks each record with the user's key and the application named, and takes the newest that
// holds; one that does not (planted, made from another machine, or by an older yarn-am) is refused,
// said on submit's output and in an event of the AM. The archive taken is named in the AM's launch
// context (envCDSArchive), which the AM passes to its TaskExecutors', and localised into the AM's and
// the TaskExecutors' containers (private: once per node); the JobManager and the TaskManagers map it
// only if it is that archive, for their JVM and home, and its content hashes to the SHA-256 in its
// name (a changed archive is code the JVM runs, unchecked: flinkdist.VerifyArchive), otherwise they start
// without it and say why.
//
// The archive is made after the job, not during it: the run's job never waits for it, and the
// dumping JVM does not share the AM container's memory with the JobManager. What it costs is the
// first run's end: the dump (TestFlinkClassDataSharing measures). The class list is the job's
// JobManager's, whose job code could have rewritten it: only class names and the JDK's lambda lines
// are taken from it (cdsClassNames), so the archive holds classes of the JDK and the home's jars as
// they are, whatever the list says.

// envCDSHome carries the home's key (cdsHomeKey) to the JobManager's driver: the directory of the
// user's cache its archive goes to. Unset: class-data-sharing = false.
const envCDSHome = "YARN_AM_FLINK_CDS_HOME"

// envCDSArchive is the archive submit took (its name in the cache), in the AM's environment and, from
// the AM, in every TaskExecutor's: the one archive a JobManager or TaskManager may map.
const envCDSArchive = "YARN_AM_FLINK_CDS_ARCHIVE"

// envCDSRefused says what submit refused in the cache (its count and the newest's name), in the AM's
// environment for its event.
const envCDSRefused = "YARN_AM_FLINK_CDS_REFUSED"

// secretCDSKey is the alias, in the AM's credentials and its driver's token file, of the key with
// which the driver makes an archive's record (cdsAppKey).
const secretCDSKey = contract.DriverSecretPrefix + "flink-cds-key"

// cdsUserKey names the user's key (framework.RemoteStage.UserKey) the records come from.
const cdsUserKey = "flink-cds"

// cdsAliasPrefix starts the name an archive is localised under, in the AM's and every TaskExecutor's
// working directory: the prefix and the archive's name in the cache.
const cdsAliasPrefix = "yarn-am-cds-"

// cdsListMax bounds the entries StageRemote reads of a home's archive directory.
const cdsListMax = 256

// cdsArchiveFile is an archive's name in the cache: its identity (flinkdist.ArchiveName without .jsa), its
// SHA-256, the application that made it and its record (cdsRecord). At most 237 bytes, below HDFS's
// 255 a name (TestCDSRecords).
var cdsArchiveFile = regexp.MustCompile(`^(flink-[A-Za-z0-9._-]{1,64}-jobmanager-[0-9a-f]{16})\.([0-9a-f]{64})\.(application_[0-9]{1,13}_[0-9]{1,10})\.([0-9a-f]{32})\.jsa$`)

// cdsAppKey is the key the user's key gives application app's driver: an HMAC of the application's
// id, so that the user's key never leaves the submitting machine and a key that did leave signs for
// its own application alone.
func cdsAppKey(userKey []byte, app string) []byte {
	m := hmac.New(sha256.New, userKey)
	m.Write([]byte("yarn-am flink class-data sharing application\x00" + app))
	return m.Sum(nil)
}

// cdsRecord is an archive's record: an HMAC, under its application's key, of its identity and
// SHA-256 (128 bits, hex).
func cdsRecord(appKey []byte, identity, sum string) string {
	m := hmac.New(sha256.New, appKey)
	m.Write([]byte("yarn-am flink class-data sharing archive\x00" + identity + "\x00" + sum))
	return hex.EncodeToString(m.Sum(nil))[:32]
}

// cdsArchiveName is the name in the cache of the archive of identity with SHA-256 sum, made by app
// holding appKey.
func cdsArchiveName(identity, sum, app string, appKey []byte) string {
	return identity + "." + sum + "." + app + "." + cdsRecord(appKey, identity, sum) + ".jsa"
}

// cdsSigned reports whether name is an archive's name whose record the user's key made.
func cdsSigned(name string, userKey []byte) bool {
	m := cdsArchiveFile.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	want := cdsRecord(cdsAppKey(userKey, m[3]), m[1], m[2])
	return hmac.Equal([]byte(want), []byte(m[4]))
}

// cdsDir is the directory of a home's archives in a user's cache (docs/job-file.md#visibility-and-the-cache).
func cdsDir(user, homeKey string) string {
	return path.Join("/user", user, ".yarn-am", "cache", "cds", homeKey)
}

// cdsHomeKey names a Flink home for its archives: the packed home's name (it holds a hash of every
// file's name, size and time, HomeArchive) or flink.provided's URI. An archive found under another
// home's key is not used anyway: its identity names the jars the JVM checks.
func cdsHomeKey(source string) string {
	sum := sha256.Sum256([]byte(filepath.Base(source) + "\x00" + source))
	if !strings.Contains(source, "://") {
		sum = sha256.Sum256([]byte(filepath.Base(source)))
	}
	return hex.EncodeToString(sum[:])[:32]
}

// stageCDS records the home's key for the driver (envCDSHome); StageRemote adds the archive.
func stageCDS(job *jobfile.Job, f *flinkSpec, homeSource string) {
	if !f.ClassDataSharing {
		return
	}
	if job.AM.Env == nil {
		job.AM.Env = map[string]string{}
	}
	job.AM.Env[envCDSHome] = cdsHomeKey(homeSource)
}

var _ framework.RemoteStager = flinkFramework{}

// StageRemote adds the newest archive of the job's Flink home whose record the user's key made from
// the user's cache to the AM's and the TaskExecutors' files, names it in the AM's environment
// (envCDSArchive), and gives the driver the application's key to sign the archive it makes
// (framework.RemoteStager); it says which archive, or that there is none yet, and what it refused.
func (flinkFramework) StageRemote(j *jobfile.Job, s framework.RemoteStage) (framework.RemoteStaged, error) {
	f := specOf(j)
	home := j.AM.Env[envCDSHome]
	if f == nil || !f.ClassDataSharing || home == "" {
		return framework.RemoteStaged{}, nil
	}
	out := s.Out
	if out == nil {
		out = io.Discard
	}
	userKey, err := s.UserKey(cdsUserKey)
	if err != nil {
		// The driver makes no archive without envCDSHome, the JVMs map none without envCDSArchive.
		delete(j.AM.Env, envCDSHome)
		fmt.Fprintf(out, "class-data sharing: off for this run: %v\n", err)
		return framework.RemoteStaged{}, nil
	}
	staged := framework.RemoteStaged{DriverSecrets: map[string][]byte{secretCDSKey: cdsAppKey(userKey, s.AppID)}}
	dir := cdsDir(s.User, home)
	found, err := signedArchives(s.FS, dir, userKey)
	if err != nil {
		fmt.Fprintf(out, "class-data sharing: not reading %s: %v; the JVMs start without an archive\n", dir, err)
		return staged, nil
	}
	if found.refused > 0 {
		note := found.refusedNote()
		fmt.Fprintf(out, "class-data sharing: %s\n", note)
		j.AM.Env[envCDSRefused] = note
	}
	if found.newest == nil {
		fmt.Fprintf(out, "class-data sharing: no archive of this Flink home yet; the JobManager's driver makes one after the job\n")
		return staged, nil
	}
	name := found.newest.Name()
	spec := jobfile.FileSpec{Source: strings.TrimSuffix(s.DefaultFS, "/") + path.Join(dir, name), Alias: cdsAliasPrefix + name}
	j.AM.Files = append(j.AM.Files, spec)
	j.TaskExecutor.Files = append(j.TaskExecutor.Files, spec)
	j.AM.Env[envCDSArchive] = name
	fmt.Fprintf(out, "class-data sharing: archive %s (%.1f MiB) from the cache\n", name, float64(found.newest.Size())/(1<<20))
	return staged, nil
}

// cdsListing is what signedArchives found in a home's archive directory.
type cdsListing struct {
	newest        os.FileInfo // the newest archive whose record holds; nil: none
	refused       int         // archives whose record does not (or that have none)
	newestRefused os.FileInfo
}

// refusedNote says what was refused, in safe characters: it goes into the AM's environment (the
// launch script) and an event, and a planted name may hold anything.
func (l cdsListing) refusedNote() string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '?'
	}, l.newestRefused.Name())
	if len(name) > 120 {
		name = name[:120] + "..."
	}
	return fmt.Sprintf("refused %d archive(s) of the cache that hold no record your key made (planted by code with your HDFS token, made from another machine or by an older yarn-am), the newest %s; the JVMs never map one (docs/flink.md#class-data-sharing)", l.refused, name)
}

// signedArchives lists dir (at most cdsListMax entries) for the newest archive whose record the
// user's key made (cdsSigned), and counts the archives refused; temporary files are passed over.
func signedArchives(fsys framework.RemoteFS, dir string, userKey []byte) (cdsListing, error) {
	var l cdsListing
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	newer := func(a, b os.FileInfo) bool { return b == nil || a.ModTime().After(b.ModTime()) }
	for i, e := range entries {
		if i >= cdsListMax {
			break
		}
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".jsa") {
			continue
		}
		if e.Mode().IsRegular() && cdsSigned(e.Name(), userKey) {
			if newer(e, l.newest) {
				l.newest = e
			}
			continue
		}
		l.refused++
		if newer(e, l.newestRefused) {
			l.newestRefused = e
		}
	}
	return l, nil
}

// cdsPlan is what a process does about class-data sharing, and what it says about it.
type cdsPlan struct {
	cds      flinkdist.CDS
	identity string // flinkdist.ArchiveName without .jsa: the archive this JVM and home could map
	say      []string
}

// planCDS finds, in the working directory dir, the archive StageRemote had localised, and uses it if
// it is the one submit took (approved: envCDSArchive, from the launch context), for this JVM and home
// (identity), and holds what its name's SHA-256 says.
func planCDS(f *flinkSpec, dir string, home *flinkdist.Home, java, approved string) cdsPlan {
	var p cdsPlan
	if !f.ClassDataSharing {
		return p
	}
	if _, version, err := flinkdist.JDKIdentity(java); err == nil && !flinkdist.CDSSupported(version) {
		p.say = append(p.say, fmt.Sprintf("class-data sharing: off: JDK %s; yarn-am makes and maps archives with JDK 13 or later", version))
		return p
	}
	if base, ok := baseArchive(java); !ok {
		// A JDK without its own (a jlink runtime made without --generate-cds-archive) is one whose
		// class-data sharing yarn-am does not rely on.
		p.say = append(p.say, fmt.Sprintf("class-data sharing: off: the JDK has no base archive (%s), which yarn-am takes as a JDK without class-data sharing", base))
		return p
	}
	name, err := flinkdist.ArchiveName(home, java, flinkdist.RoleApplication)
	if err != nil {
		p.say = append(p.say, fmt.Sprintf("class-data sharing: off: %v", err))
		return p
	}
	p.identity = strings.TrimSuffix(name, ".jsa")
	found, _ := filepath.Glob(filepath.Join(dir, cdsAliasPrefix+"*.jsa"))
	if len(found) == 0 {
		p.say = append(p.say, "class-data sharing: no archive yet for "+p.identity)
		return p
	}
	local := found[0]
	m := cdsArchiveFile.FindStringSubmatch(strings.TrimPrefix(filepath.Base(local), cdsAliasPrefix))
	switch {
	case approved == "" || filepath.Base(local) != cdsAliasPrefix+approved:
		// Only the archive whose record submit checked; any other came by another way.
		p.say = append(p.say, fmt.Sprintf("class-data sharing: %s is not the archive submit took (%s=%s); not used", bounded(filepath.Base(local)), envCDSArchive, bounded(approved)))
	case m == nil:
		p.say = append(p.say, fmt.Sprintf("class-data sharing: %s is not an archive's name; not used", filepath.Base(local)))
	case m[1] != p.identity:
		p.say = append(p.say, fmt.Sprintf("class-data sharing: the archive %s was made for another JVM or home than this one (%s); not used", m[1], p.identity))
	default:
		start := time.Now()
		if err := flinkdist.VerifyArchive(local, m[2]); err != nil {
			p.say = append(p.say, err.Error())
			return p
		}
		p.cds.Use = local
		p.say = append(p.say, fmt.Sprintf("class-data sharing: using the archive %s (SHA-256 verified in %.2f s)", filepath.Base(local), time.Since(start).Seconds()))
	}
	return p
}

// cdsTrainTimeout bounds the JVM that makes an archive (4.5 s measured on a quiet 2-core machine,
// several times that at load). The application ends only after it, with its TaskManagers still held,
// and a TaskManager whose JobManager is gone gives up after Flink's registration timeout (5 minutes)
// with a failure: so well below that.
const cdsTrainTimeout = 90 * time.Second

// makeArchive has, after the job, a JVM of the JobManager's java write the archive of the classes
// the JobManager's JVM loaded (cds, its class list and class-loading log), checks that a JVM maps
// it, and puts it into the user's cache. It says what it did on out; a failure costs only the next
// run's speed.
func makeArchive(ctx context.Context, s *flinkSetup, identity, java string, cds flinkdist.CDS, out io.Writer) {
	say := func(format string, a ...any) {
		fmt.Fprintf(out, "yarn-am flink-jobmanager: class-data sharing: "+format+"\n", a...)
	}
	key := os.Getenv(envCDSHome)
	if key == "" || identity == "" || ctx.Err() != nil {
		return // class-data-sharing = false, or the driver is being stopped
	}
	app, appKey, err := cdsSigner()
	if err != nil {
		say("not making an archive: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, cdsTrainTimeout)
	defer cancel()
	start := time.Now()
	trained, err := trainArchive(ctx, s, java, cds.ClassList, cds.LoadLog)
	archive := trained.archive
	if err != nil {
		say("no archive made: %v", err)
		return
	}
	defer os.Remove(archive)
	made := time.Since(start)
	sum, err := flinkdist.ArchiveSum(archive)
	if err != nil {
		say("no archive made: %v", err)
		return
	}
	fi, err := os.Stat(archive)
	if err != nil {
		say("no archive made: %v", err)
		return
	}
	name := cdsArchiveName(identity, sum, app, appKey)
	if !cdsArchiveFile.MatchString(name) {
		say("archive made in %.1f s but not put into the cache: its name %s is not one a later submit would take (a version string too long?)", made.Seconds(), bounded(name))
		return
	}
	remote := path.Join(cdsDir(os.Getenv(hadoop.EnvUserName), key), name)
	upStart := time.Now()
	if err := uploadArchive(archive, remote); err != nil {
		say("archive made in %.1f s but not put into the cache: %v", made.Seconds(), err)
		return
	}
	rpc := fmt.Sprintf("and %d of Flink's RPC jar", trained.rpc)
	if trained.rpc == 0 {
		rpc = "and none of Flink's RPC jar: " + trained.rpcNote
	}
	say("archive %s (%.1f MiB) made in %.1f s from the %d classes the JobManager loaded (%s), put into the cache in %.1f s: the next run's JVMs map it",
		path.Base(remote), float64(fi.Size())/(1<<20), made.Seconds(), trained.classes, rpc, time.Since(upStart).Seconds())
}

// cdsSigner returns the application and its key with which the driver signs the archive it makes,
// or why it can make none: no key in its token file, or a Kerberized cluster.
func cdsSigner() (string, []byte, error) {
	app, appKey, err := cdsSigningKey(os.Getenv("HADOOP_TOKEN_FILE_LOCATION"), os.Getenv("CONTAINER_ID"))
	if err != nil {
		return "", nil, err
	}
	// The AM container's site files ($HADOOP_CONF_DIR) say whether the cluster uses Kerberos.
	conf, err := yarnrpc.LoadConfigFromEnv()
	if err != nil {
		return "", nil, err
	}
	if secure, err := conf.SecurityEnabled(); err != nil || secure {
		return "", nil, errors.New("writing it to the cache with delegation tokens (a Kerberized cluster) is not supported yet")
	}
	return app, appKey, nil
}

// cdsSigningKey reads the application's key (secretCDSKey) from the driver's token file and the
// application's id from its container's id.
func cdsSigningKey(tokenFile, containerID string) (app string, key []byte, err error) {
	if tokenFile == "" {
		return "", nil, errors.New("HADOOP_TOKEN_FILE_LOCATION is not set: the key that signs an archive comes in the driver's token file")
	}
	creds, err := yarnrpc.ReadCredentialsFile(tokenFile)
	if err != nil {
		return "", nil, err
	}
	key = creds.Secrets[secretCDSKey]
	if len(key) != sha256.Size {
		return "", nil, fmt.Errorf("the token file %s has no key %q to sign the archive with (submit puts one there)", tokenFile, secretCDSKey)
	}
	c, err := yarnrpc.ParseContainerID(containerID)
	if err != nil {
		return "", nil, fmt.Errorf("CONTAINER_ID: %w", err)
	}
	return yarnrpc.FormatApplicationID(c.GetAppId()), key, nil
}

// cdsClassListName is the JobManager's class list in the driver's working directory.
const cdsClassListName = ".yarn-am-cds-classes.lst"

// maxClassListBytes bounds the class list read (a JobManager's is about 1 MiB: 10,000 classes and
// 1,200 lambda lines).
const maxClassListBytes = 64 << 20

// cdsClassNames returns the lines of a class list as -XX:DumpLoadedClassList wrote it that the
// archive's JVM may take, and how many name a class: a class's name (a/b/C), and the JDK's
// @lambda-proxy and @lambda-form-invoker lines, which name methods of classes it loads from the
// JDK and the home's jars. Everything else is dropped: comments, and what the JVM does not write
// for these classes but would obey, such as "id:" and "source:" (a class of a jar anywhere, for
// class loaders of the job's own, matched at run time by no more than a CRC-32), since the job's
// code ran in the JVM that wrote the list.
func cdsClassNames(list []byte) ([]byte, int) {
	var b strings.Builder
	n := 0
	for _, line := range strings.Split(string(list), "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "@lambda-proxy ") || strings.HasPrefix(line, "@lambda-form-invoker "):
		case line != "" && !strings.ContainsAny(line, " \t#@:") && len(line) <= 1024:
			n++
		default:
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return []byte(b.String()), n
}

// cdsTrained is what trainArchive made.
type cdsTrained struct {
	archive string
	classes int    // the class names of the JobManager's class list given to the dump
	rpc     int    // the classes of Flink's RPC jar added to them (cdsrpc.go)
	rpcNote string // why there are none, when there are none
}

// trainArchive has a JVM of java (the JobManager's) write an archive of the classes named in the
// JobManager's class list at classList (cdsClassNames) that the JDK and the home's jars hold, and of
// the classes of Flink's RPC jar its class-loading log at loadLog names (withRPCClasses), with the
// class path later JVMs give (the home's jars relative to the working directory), and checks that a
// JVM with that class path maps it: a JVM killed while it wrote leaves a file that crashes the next
// one. Should the JVM refuse the list with the RPC classes, it writes one without them.
func trainArchive(ctx context.Context, s *flinkSetup, java, classList, loadLog string) (cdsTrained, error) {
	var t cdsTrained
	raw, err := readHead(classList, maxClassListBytes+1)
	if err != nil {
		return t, fmt.Errorf("the JobManager's class list: %w", err)
	}
	if len(raw) > maxClassListBytes {
		return t, fmt.Errorf("the JobManager's class list %s is larger than %d bytes", classList, maxClassListBytes)
	}
	names, n := cdsClassNames(raw)
	if n == 0 {
		return t, fmt.Errorf("the JobManager's class list %s names no class", classList)
	}
	t.classes = n
	base, err := filepath.Abs(s.dir)
	if err != nil {
		return t, err
	}
	dir, err := os.MkdirTemp(base, "yarn-am-cds-train-")
	if err != nil {
		return t, err
	}
	defer os.RemoveAll(dir)
	withRPC, rpc, note := rpcClassList(s.home, names, loadLog, dir)
	t.rpcNote = note
	cp, err := s.home.SharedClasspath(base, nil)
	if err != nil {
		return t, err
	}
	archive := filepath.Join(s.dir, ".yarn-am-cds-new.jsa")
	dump := func(list []byte) error {
		_ = os.Remove(archive)
		taken := filepath.Join(dir, "classes.lst")
		if err := os.WriteFile(taken, list, 0o600); err != nil {
			return err
		}
		argv := flinkdist.DumpArgs(java, taken, archive, cp)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = s.dir
		var outBuf tailBuffer
		cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
		if err := cmd.Run(); err != nil {
			_ = os.Remove(archive)
			if ctx.Err() != nil {
				return fmt.Errorf("the JVM did not write the archive within %s", cdsTrainTimeout)
			}
			return fmt.Errorf("the JVM that writes the archive failed (%v); its output ends: %s", err, outBuf.String())
		}
		return nil
	}
	if rpc > 0 {
		err = dump(withRPC)
		if err == nil {
			t.rpc = rpc
		} else if ctx.Err() == nil {
			t.rpcNote = fmt.Sprintf("the JVM refused the list with them (%s)", tailOf(err.Error(), 300))
			err = dump(names)
		}
	} else {
		err = dump(names)
	}
	if err != nil {
		return t, err
	}
	// The JVM that maps it: the same java and class path, -Xshare:on fails when it cannot.
	check := exec.CommandContext(ctx, java, "-XX:SharedArchiveFile="+archive, "-Xshare:on", "-classpath", cp, "-version")
	check.Dir = s.dir
	if b, err := check.CombinedOutput(); err != nil {
		_ = os.Remove(archive)
		return t, fmt.Errorf("the archive written does not map (%v): %s", err, tailOf(string(b), 600))
	}
	t.archive = archive
	return t, nil
}

// rpcClassList returns names with the classes of Flink's RPC jar that the JobManager's log at
// loadLog names (cdsrpc.go), the jar unpacked into dir, and how many; or, with none, why.
func rpcClassList(home *flinkdist.Home, names []byte, loadLog, dir string) ([]byte, int, string) {
	if loadLog == "" {
		return nil, 0, "no class-loading log"
	}
	raw, err := readHead(loadLog, maxLoadLogBytes)
	if err != nil {
		return nil, 0, fmt.Sprintf("the class-loading log: %v", err)
	}
	order := rpcClassNames(raw)
	if len(order) == 0 {
		return nil, 0, "the class-loading log names none"
	}
	jar := filepath.Join(dir, rpcJarEntry)
	if err := unpackRPCJar(home, jar); err != nil {
		return nil, 0, err.Error()
	}
	classes, err := readRPCClasses(jar, order)
	if err != nil {
		return nil, 0, err.Error()
	}
	list, n := withRPCClasses(names, classes, order, jar)
	if n == 0 {
		return nil, 0, fmt.Sprintf("none of the %d the log names could be placed", len(order))
	}
	return list, n, ""
}

// readHead reads at most max bytes of the file at p, which the JobManager's JVM wrote: a regular
// file, never a pipe or a link put in its place (the job's code ran in that JVM), so the read ends.
func readHead(p string, max int64) ([]byte, error) {
	f, err := boundedread.OpenOwnRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// uploadArchive writes the local archive to remote on HDFS under a temporary name and renames it: a
// reader never sees half an archive, and an existing archive is never rewritten (its size and time
// are in the launch contexts of the applications that use it).
func uploadArchive(local, remote string) error {
	c, _, err := hdfsfile.DialURI(os.Getenv(contract.EnvStagingDir), os.Getenv(hadoop.EnvUserName), 10*time.Second)
	if err != nil {
		return fmt.Errorf("%s: %w", contract.EnvStagingDir, err)
	}
	defer c.Close()
	if fi, err := c.Stat(remote); err == nil {
		// The same identity and content, made by another run; unless what is there is not what its
		// name says (then it is replaced: every run refuses it anyway).
		if archiveMatchesName(c, remote, path.Base(remote), fi.Size()) {
			return nil
		}
		if err := c.Remove(remote); err != nil {
			return err
		}
	}
	if err := c.MkdirAll(path.Dir(remote), 0o700); err != nil {
		return err
	}
	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	tmp := path.Join(path.Dir(remote), ".tmp-"+hex.EncodeToString(suffix))
	w, err := c.Create(tmp)
	if err != nil {
		return err
	}
	f, err := os.Open(local)
	if err != nil {
		_ = w.Close()
		_ = c.Remove(tmp)
		return err
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		_ = w.Close()
		_ = c.Remove(tmp)
		return err
	}
	if err := hdfsfile.Close(w); err != nil {
		_ = c.Remove(tmp)
		return err
	}
	if err := c.Rename(tmp, remote); err != nil {
		_ = c.Remove(tmp)
		return err
	}
	return nil
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }

func tailOf(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// archiveMatchesName reports whether the archive at remote hashes to the SHA-256 in its name.
func archiveMatchesName(c *hdfs.Client, remote, name string, size int64) bool {
	m := cdsArchiveFile.FindStringSubmatch(name)
	if m == nil || size > flinkdist.MaxArchiveBytes {
		return false
	}
	r, err := c.Open(remote)
	if err != nil {
		return false
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, size+1))
	return err == nil && n == size && hex.EncodeToString(h.Sum(nil)) == m[2]
}

// baseArchive is where the JDK of java keeps its default CDS archive (<java home>/lib/server/
// classes.jsa, or classes_nocoops.jsa), and whether it is there. java is a path or a name on PATH.
func baseArchive(java string) (string, bool) {
	if !strings.Contains(java, "/") {
		if found, err := exec.LookPath(java); err == nil {
			java = found
		}
	}
	if real, err := filepath.EvalSymlinks(java); err == nil {
		java = real
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(java)), "lib", "server")
	for _, name := range []string{"classes.jsa", "classes_nocoops.jsa"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(dir, name), true
		}
	}
	return filepath.Join(dir, "classes.jsa"), false
}
