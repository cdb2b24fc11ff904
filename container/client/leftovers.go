package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"time"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Leftover staging directories (docs/running.md#nothing-left-behind): an application killed with
// Hadoop's own `yarn application -kill` while it had attempts left keeps its staging directory,
// because its AM cannot tell that SIGTERM from a preemption or a lost node, after which YARN would
// start another attempt that needs the directory. The next submit of the same user removes the
// directories of applications the ResourceManager reports as ended.

// leftoverScan bounds one sweep: the directories looked at, and the time the sweep may take.
const (
	leftoverScanMax     = 256
	leftoverScanTimeout = 15 * time.Second
)

var appDirName = regexp.MustCompile(`^application_[0-9]+_[0-9]+$`)

// LeftoverFS is what the sweep needs of the staging file system (*HDFS implements it).
type LeftoverFS interface {
	ReadDir(dir string) ([]os.FileInfo, error)
	RemoveAll(name string) error
}

// AppReporter is what the sweep needs of the ResourceManager (*yarnrpc.ApplicationClient).
type AppReporter interface {
	GetApplicationReport(ctx context.Context, id *hadooppb.ApplicationIdProto) (*hadooppb.ApplicationReportProto, error)
}

// ReadDir lists a directory of the staging file system.
func (h *HDFS) ReadDir(dir string) ([]os.FileInfo, error) { return h.Client.ReadDir(dir) }

// RemoveLeftovers removes the staging directories under /user/<user>/.yarn-am/ whose applications
// the ResourceManager reports as FINISHED, FAILED or KILLED, and says so on out, one line each.
// Directories of running applications, of applications the RM does not know (they may belong to
// another cluster that shares this file system) and anything that is not an application's directory
// are left alone. At most leftoverScanMax directories are looked at, within leftoverScanTimeout.
// It returns the ids whose directories it removed; an error means the sweep stopped early.
func RemoveLeftovers(ctx context.Context, fsys LeftoverFS, rm AppReporter, user string, out io.Writer) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, leftoverScanTimeout)
	defer cancel()
	base := path.Join("/user", user, ".yarn-am")
	entries, err := fsys.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", base, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() && appDirName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) > leftoverScanMax {
		names = names[:leftoverScanMax]
	}
	var removed []string
	for _, name := range names {
		if ctx.Err() != nil {
			return removed, fmt.Errorf("looking for leftover staging directories: %w", ctx.Err())
		}
		id, err := yarnrpc.ParseApplicationID(name)
		if err != nil {
			continue
		}
		r, err := rm.GetApplicationReport(ctx, id)
		if errors.Is(err, yarnrpc.ErrApplicationNotFound) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("looking for leftover staging directories: %s: %w", name, err)
		}
		st := r.GetYarnApplicationState()
		if !IsTerminal(st) {
			continue
		}
		dir := path.Join(base, name)
		if err := fsys.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, fmt.Errorf("removing the leftover staging directory %s: %w", dir, err)
		}
		removed = append(removed, name)
		fmt.Fprintf(out, "removed the leftover staging directory %s of %s (%s)\n", dir, name, StateName(st))
	}
	return removed, nil
}
