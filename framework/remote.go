package framework

import (
	"io"
	"os"

	"github.com/yarn-am/yarn-am/jobfile"
)

// RemoteFS is the part of the cluster's file system a framework's StageRemote may read.
type RemoteFS interface {
	ReadDir(dir string) ([]os.FileInfo, error)
}

// RemoteStager is a framework whose staging also reads what earlier applications of the user left on
// the cluster's file system (the Flink JobManager's class-data-sharing archive,
// docs/flink.md#class-data-sharing). submit calls StageRemote after Stage, once it has reached the
// file system and has the application's id, before the job's files are staged: it may add remote
// files (hdfs:// URIs under s.DefaultFS) to the job's AM and TaskExecutor files, and secrets to the
// AM's driver. An error there fails the submit; what is merely missing is not an error.
type RemoteStager interface {
	StageRemote(j *jobfile.Job, s RemoteStage) (RemoteStaged, error)
}

// RemoteStage is what submit gives StageRemote.
type RemoteStage struct {
	FS        RemoteFS
	User      string // the user the application runs as
	DefaultFS string // the file system's URI (hdfs://host:port)
	AppID     string // the application being submitted
	// UserKey returns the submitting user's key named name (32 bytes), kept on the submitting machine
	// readable by the user alone and made on first use: what the user's own submits hold and their
	// containers never do, to sign and check what the user's applications leave on the file system,
	// which anything in those containers can write (docs/security.md#keys-kept-on-the-submitting-machine).
	UserKey func(name string) ([]byte, error)
	Out     io.Writer // progress, as Stage's
}

// RemoteStaged is what StageRemote adds beyond the job's files.
type RemoteStaged struct {
	// DriverSecrets are added, by alias, to the AM's credentials and its driver's token file, never
	// to a TaskExecutor's: each alias starts with contract.DriverSecretPrefix (submit refuses one
	// that does not).
	DriverSecrets map[string][]byte
}
