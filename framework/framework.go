// Package framework is the seam between yarn-am and the workload frameworks it runs (Flink's
// TaskManagers and JobManager, the training gang's ranks): one interface a framework implements and
// a registry like the external-resource drivers' (resources.RegisterDriver). The AM, the client, the
// job file and the command line call through it and never name a framework; a framework is one
// package that registers itself (framework/builtin imports the ones compiled into yarn-am).
//
// What a framework decides, in the order of a job's life (docs/design.md#adding-a-framework):
//
//   - the job file: its own table ([flink]) read in the job file's pass, with line-numbered problems,
//     the -D keys it takes, the TaskExecutors' command when it runs its own workers (Table);
//   - the client's pre-flight and staging, before anything is submitted (Check, Stage), and the
//     driver the AM runs in its container (Driver);
//   - the AM: the environment of its driver and TaskExecutors, the links status and the web page
//     show, whether the driver ends at the failure limit, and what it does on a scale, a preemption
//     warning or a later AM attempt (StartAM and the AM value it returns);
//   - the containers: the commands its processes run (Commands) and what a TaskExecutor's launcher
//     does before the worker starts (PrepareWorker);
//   - the outcome: a framework with a driver reports it through the driver's exit code and the last
//     lines of its stderr (docs/running.md#modes-batch-service-driver), as every driver does.
package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/jobfile"
)

// Framework is a workload framework. Embed Base for the hooks a framework does not need.
type Framework interface {
	// Name is the framework's name: its job-file table's, if it has one, and the value of
	// contract.EnvFramework in its TaskExecutors.
	Name() string
	// Table is its job-file table ([flink]); a zero TableInfo (no Reader) = none: the framework is
	// selected by Selects alone.
	Table() jobfile.TableInfo
	// Selects reports whether a job that has no framework table runs on this framework (the training
	// gang: taskexecutor.gang). A job with a framework's table runs on that framework.
	Selects(j *jobfile.Job) bool

	// Check is the framework's pre-flight of a job beyond the job file, before anything is staged.
	Check(j *jobfile.Job) error
	// Stage adds what the framework's containers need to the job's AM and TaskExecutor files
	// (progress to out).
	Stage(j *jobfile.Job, out io.Writer) error
	// Driver is the AM's driver in the job ("" = none, the job's own --driver or none) and, when it
	// has one, why a user's --driver or --service does not go with it.
	Driver(j *jobfile.Job) (command, why string)

	// StartAM runs in the AM before its driver and its TaskExecutors start.
	StartAM(ctx context.Context, j *jobfile.Job, s AMStart) (*AM, error)

	// Commands are the subcommands of the yarn-am binary the framework's processes run.
	Commands() []Command
	// PrepareWorker runs in a TaskExecutor's launcher after discovery, before the worker starts,
	// and returns what it adds to the worker's environment (KEY=VALUE).
	PrepareWorker(ctx context.Context, w Worker) ([]string, error)
}

// Warner is a framework whose pre-flight also finds what works but is likely a mistake (a Flink key
// that is a near miss of one the version knows): the client prints each warning and goes on. It is
// asked only of a job that passed Check.
type Warner interface {
	CheckWarnings(j *jobfile.Job) []string
}

// AMStart is what the AM knows when it starts a job's framework.
type AMStart struct {
	Host    string // the AM's host, as its TaskExecutors reach it
	Attempt int    // the AM's attempt, 1 for the first
	// Emit adds an event to the AM's log (follow and submit print it); the AM sets its ID and time,
	// and info severity when it has none. Never nil; safe from any goroutine.
	Emit func(contract.Event)
	// Scale changes the number of TaskExecutors the AM declares, by the path yarn-am scale takes
	// (its requirement-changed event says why), without asking AM.OnScale: a framework that sizes
	// its workers from its own work's demand calls it. When the number goes down, the running
	// containers named in stopFirst (idle workers) stop first, the others newest first. It fails
	// before the AM runs and once it is finishing. Never nil; safe from any goroutine.
	Scale func(to int, stopFirst []string, why string) error
	// Instances is the number of TaskExecutors the AM declares now (0 before it runs). Never nil.
	Instances func() int
	// GPUUtilisation is the latest GPU utilisation (0..1, the mean over its GPUs) the launcher of
	// TaskExecutor container id sampled; false when there is none (no GPU, no sample yet, not one of
	// the AM's, the AM not running yet). Nil in tests that need none; safe from any goroutine.
	GPUUtilisation func(id string) (float64, bool)
	// Headroom is what the scheduler can still give the application and what one TaskExecutor
	// takes; false before the first allocate response that named a headroom. Nil in tests that need
	// none; safe from any goroutine.
	Headroom func() (Headroom, bool)
	// TLS issues certificates from the application's authority (nil in tests that need none).
	TLS Authority
	// TrackingURL is the AM's plain tracking URL, http://host:port/, under which the AM serves the
	// framework's Proxy; reads of its Public paths need no secret, so a TaskExecutor may poll them.
	TrackingURL string
	// State keeps the framework's own small state across the AM's attempts (a Flink job's latest
	// completed checkpoint, docs/flink.md#when-the-applicationmaster-is-lost); nil when the AM has
	// no staging directory to keep it in.
	State StateStore
	// Files reads names and sizes on the filesystem of the application's staging directory (its
	// NameNode), with the AM's own credentials: a framework checks what is there before it relies on
	// it (a Flink job's kept checkpoint, docs/flink.md#when-the-applicationmaster-is-lost). nil when
	// the AM has no staging directory.
	Files Files
	// Publish makes name = value known to the TaskExecutors' launchers (Worker.Published): the AM
	// serves what was published only over HTTPS with the application secret
	// (contract.FrameworkPublishedPath), since it names what the framework's processes bound (a Flink
	// JobManager's RPC address, known only once its JVM has bound it). Never nil; safe from any
	// goroutine; a later value replaces an earlier one.
	Publish func(name, value string)
}

// Headroom is the scheduler's headroom for the application (AMStart.Headroom): how many more
// TaskExecutors the queue can hold is Free.Count(Worker).
type Headroom struct {
	// Free is the last allocate response's available_resources: what the application's queue can
	// still give it (memory-mb, vcores and every resource type, yarn.io/gpu among them).
	Free contract.Capability
	// Worker is what one TaskExecutor takes: as the last one was allocated (the scheduler rounds an
	// ask up), else as asked.
	Worker contract.Capability
}

// StateStore keeps a framework's state across the AM's attempts, in the application's staging
// directory. Save replaces the whole state in one step (no reader sees half of it); Load returns
// nil, nil when no attempt saved any, and refuses more than MaxState bytes.
type StateStore interface {
	Load(ctx context.Context) ([]byte, error)
	Save(ctx context.Context, data []byte) error
}

// Files reads the metadata of one filesystem, never a file's contents, and removes what the framework
// itself wrote there (a Flink job's savepoints beyond the count it keeps,
// docs/flink.md#savepoints-on-a-schedule). A path is absolute, of that filesystem, without its scheme
// and authority; a missing one is an error wrapping fs.ErrNotExist.
type Files interface {
	// FS is the filesystem's scheme and authority (hdfs://127.0.0.1:8020): a path of another is not
	// on it.
	FS() string
	// Stat is the status of p.
	Stat(ctx context.Context, p string) (FileInfo, error)
	// List is the entries of the directory dir, at most max of them (more is an error).
	List(ctx context.Context, dir string, max int) ([]FileInfo, error)
	// Remove deletes p, and everything under it when it is a directory.
	Remove(ctx context.Context, p string) error
}

// FileInfo is what Files tells of a file or directory.
type FileInfo struct {
	Name   string // its own name (in List; Stat's is empty)
	IsDir  bool
	Length int64 // a file's bytes
	// ModTime is when it was last written (the NameNode's clock on HDFS); zero when not known.
	ModTime time.Time
}

// MaxState bounds a framework's saved state: a few paths and ids, well below HDFS's limit on an
// extended attribute (dfs.namenode.fs-limits.max-xattr-size, 16 KiB by default).
const MaxState = 8 << 10

// Deferred is what AM.OnScale returns when it accepts a change but carries it out itself, later,
// through AMStart.Scale (a Flink job rescales first, its idle TaskManagers go after): the AM keeps
// its count, adds an event with Message and answers the scale with it.
type Deferred struct{ Message string }

func (d *Deferred) Error() string { return d.Message }

// AM is what a framework adds to the AM of one job.
type AM struct {
	// DriverEnv and WorkerEnv are added to the driver's and every TaskExecutor's environment.
	DriverEnv, WorkerEnv map[string]string
	// WorkerSecrets are added, by alias, to the credentials of the driver and of every TaskExecutor
	// (the token file HADOOP_TOKEN_FILE_LOCATION names, which only the application's user reads),
	// beside the application secret: key material the framework's processes need and that must
	// never be in an environment or a localised file (Flink's internal TLS key). An alias the
	// credentials already hold is refused.
	WorkerSecrets map[string][]byte
	// Links are shown by status, the API and the web page (contract.Status.Links).
	Links []contract.Link
	// EndDriverOnFailureLimit: the AM stops the driver when the TaskExecutors' failure limit is
	// reached, instead of waiting for it (a driver that would wait for workers that are no longer
	// replaced).
	EndDriverOnFailureLimit bool
	// OnScale, when set, is asked before the AM changes the declared number of TaskExecutors (PUT
	// requirements, yarn-am scale); an error refuses the change with its text, a *Deferred accepts
	// it for the framework to carry out (AMStart.Scale).
	OnScale func(ctx context.Context, from, to int) error
	// Instances, when > 0, is the number of TaskExecutors the AM declares at its start instead of
	// the job's taskexecutor.instances: a framework that sizes its workers from its work's demand
	// starts low and calls AMStart.Scale.
	Instances int
	// OnPreemption, when set, is told of the ResourceManager's preemption warnings (the containers
	// named), besides the launchers' own notices, and of the AM's own notice before it gives back a
	// container whose GPUs stayed idle: reason is the notice's (contract.PreemptionNotice.Reason: ""
	// for the ResourceManager's warning, contract.NoticeIdleGPURelease for the AM's release).
	OnPreemption func(ctx context.Context, containers []string, reason string)
	// GiveBack, when set, lets a framework that sizes its workers from its demand (Instances > 0)
	// give back a TaskExecutor whose GPUs stayed idle (taskexecutor.idle-gpu-release); nil: such a
	// job keeps its GPUs.
	GiveBack *GiveBack
	// DetailsTitle and Details, when Details is set, are what the framework says of its own work (a
	// Flink job's id, state, parallelism, last checkpoint): the AM calls Details from one goroutine
	// of its own, outside its lock, every contract.FrameworkDetailsInterval while it runs, cuts the
	// answer to contract.MaxDetails and serves the last one in the status (contract.Status.Framework),
	// which status and the web page print. A framework may Emit events from it, about what changed
	// since its last call.
	DetailsTitle string
	Details      func(ctx context.Context) ([]contract.Detail, error)
	// Series, when set with Details, are values of the work over time (a Flink job's parallelism
	// per vertex): the AM calls it after each Details that answered, cuts it to
	// contract.MaxSeries of contract.MaxSeriesPoints (the newest) and serves it beside the details
	// (contract.FrameworkStatus.Series), which the page draws. It reads what the framework keeps,
	// never its processes.
	Series func() []contract.FrameworkSeries
	// Collectors, when set, are served with the AM's own at /metrics: Prometheus collectors the
	// framework keeps current itself (a Flink job's autoscaler gauges).
	Collectors []prometheus.Collector
	// OnStop, when set, stops the application gracefully (yarn-am stop, POST /api/v1/stop): the
	// framework keeps its work's state as the request says (StateRequest) and ends its driver with
	// success, and returns what it kept. Without it stop refuses and names yarn-am kill. ctx bounds
	// it (the stop's --timeout, StateRequest.Deadline).
	OnStop func(ctx context.Context, r StateRequest) (Kept, error)
	// OnKeepState, when set, keeps its work's state without stopping it (yarn-am savepoint, POST
	// /api/v1/savepoint) as the request says, and returns what it kept. Without it the AM refuses,
	// saying the framework keeps no state on demand. ctx bounds it (the command's --timeout).
	OnKeepState func(ctx context.Context, r StateRequest) (Kept, error)
	// RestartDriver, when set, is asked when the driver exits with a code other than 0 while the AM
	// runs and did not stop it: ok starts the driver again in place, in the same attempt, with env
	// added to its environment (a Flink JobManager whose JVM died, started again from its latest
	// checkpoint on the ports its TaskManagers know). It decides alone how many restarts it allows
	// and says what it does in its events; without it, or with ok false, the driver's exit ends the
	// application as always.
	RestartDriver func(ctx context.Context, code int) (env map[string]string, ok bool)
	// Proxy, when set, is the framework's web UI and API, which the AM serves under its own tracking
	// URL by the framework's Proxy.Access and shows as a link; nil: none.
	Proxy *Proxy
}

// GiveBack is how a demand-sized framework gives back one TaskExecutor for its idle GPUs. Can, asked
// under the AM's lock (no I/O), says whether the work can do with one fewer than from, and why not
// (the AM keeps the GPUs and says so). Release, called after the idle container's warning and its
// grace (OnPreemption's checkpoint), shrinks the work by one TaskExecutor's share and, once the work
// has left a TaskExecutor, lowers the count through AMStart.Scale naming it in stopFirst, the idle
// container when the work left that one; an error says why nothing was given back.
type GiveBack struct {
	Can     func(from int) error
	Release func(ctx context.Context, container string) error
}

// NotStartedError is what a Proxy's Transport returns while the framework's server has not started
// (a Flink JobManager whose ports are not bound yet): the AM answers 503 with its text instead of 502.
type NotStartedError struct{ What string }

func (e *NotStartedError) Error() string { return e.What }

// Command is a subcommand of the yarn-am binary that a framework's process runs (flink-jobmanager).
// The command line takes no arguments; cmd/yarn-am parses it and prints Usage for --help.
type Command struct {
	Name, Summary, Usage string
	Run                  func(stdout, stderr io.Writer) int
}

// Worker is a TaskExecutor as its launcher sees it before the worker starts.
type Worker struct {
	ContainerID string
	Dir         string // the container's working directory
	// Rendezvous waits for the container's place in its gang (nil outside a gang).
	Rendezvous func(ctx context.Context) (*contract.Rendezvous, error)
	// Published asks the AM once for what the framework published so far (AMStart.Publish); nil
	// when the launcher has no HTTPS client of the AM's.
	Published func(ctx context.Context) (map[string]string, error)
	Log       logrus.FieldLogger
}

// ErrRestarted: the worker must not start because its round restarted before it did (the gang's);
// the launcher ends as if stopped.
var ErrRestarted = errors.New("the gang restarted before this rank started")

// Base implements every hook as "nothing to add"; a framework embeds it and overrides what it needs.
type Base struct{}

func (Base) Table() jobfile.TableInfo                  { return jobfile.TableInfo{} }
func (Base) Selects(*jobfile.Job) bool                 { return false }
func (Base) Check(*jobfile.Job) error                  { return nil }
func (Base) Stage(*jobfile.Job, io.Writer) error       { return nil }
func (Base) Driver(*jobfile.Job) (command, why string) { return "", "" }
func (Base) StartAM(context.Context, *jobfile.Job, AMStart) (*AM, error) {
	return &AM{}, nil
}
func (Base) Commands() []Command                                     { return nil }
func (Base) PrepareWorker(context.Context, Worker) ([]string, error) { return nil, nil }

// none is the framework of a job that names none: a plain worker command.
type none struct{ Base }

func (none) Name() string { return "" }

var (
	mu         sync.RWMutex
	frameworks = map[string]Framework{}
)

// Register makes a framework available by its name, and its table to the job file. A framework
// package calls it from init; registering a name twice replaces the first.
func Register(f Framework) {
	mu.Lock()
	frameworks[f.Name()] = f
	mu.Unlock()
	if t := f.Table(); t.Reader != nil {
		t.Name = f.Name()
		jobfile.RegisterTable(t)
	}
}

// Lookup returns the registered framework of that name; "" is the plain job's (always there).
func Lookup(name string) (Framework, error) {
	if name == "" {
		return none{}, nil
	}
	mu.RLock()
	defer mu.RUnlock()
	if f, ok := frameworks[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("no framework %q in this yarn-am (it has %v)", name, names())
}

// Of returns the framework a job runs on: its table's, else the first registered framework (by name)
// that Selects it, else the plain job's.
func Of(j *jobfile.Job) Framework {
	if j != nil && j.Framework != nil {
		if f, err := Lookup(j.Framework.Name); err == nil {
			return f
		}
	}
	mu.RLock()
	defer mu.RUnlock()
	for _, n := range names() {
		if j != nil && frameworks[n].Selects(j) {
			return frameworks[n]
		}
	}
	return none{}
}

// Commands returns the commands of every registered framework, by name.
func Commands() []Command {
	mu.RLock()
	defer mu.RUnlock()
	var out []Command
	for _, n := range names() {
		out = append(out, frameworks[n].Commands()...)
	}
	slices.SortFunc(out, func(a, b Command) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// names lists the registered frameworks (mu held).
func names() []string { return slices.Sorted(maps.Keys(frameworks)) }
