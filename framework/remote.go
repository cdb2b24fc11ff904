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
// file system, before the job's files are staged: it may add remote files (hdfs:// URIs under
// defaultFS) to the job's AM and TaskExecutor files. An error there fails the submit; what is merely
// missing is not an error.
type RemoteStager interface {
	StageRemote(j *jobfile.Job, fsys RemoteFS, user, defaultFS string, out io.Writer) error
}
