package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/yarn-am/yarn-am/container/client"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Check refuses a filter that can match nothing of the application app (id: as the user wrote it),
// in the words of the command's flags: a --container of another application, --am with a container
// that is not the AM's, a negative --tail, a --file that is a path.
func (f Filter) Check(app *hadooppb.ApplicationIdProto, id string) error {
	bad := func(format string, a ...any) error { return fmt.Errorf(format, text.BoundArgs(a)...) }
	if f.Container != "" {
		cid, err := yarnrpc.ParseContainerID(f.Container)
		if err != nil {
			return bad("--container %s: %v", f.Container, err)
		}
		if got := cid.GetAppAttemptId().GetApplicationId(); got.GetClusterTimestamp() != app.GetClusterTimestamp() || got.GetId() != app.GetId() {
			return bad("--container %s belongs to %s, not to %s", f.Container, yarnrpc.FormatApplicationID(got), id)
		}
		if f.AM && !IsAMContainer(f.Container) {
			return bad("--container %s with --am: that container is not the ApplicationMaster's (number 000001 of an attempt)", f.Container)
		}
	}
	if f.Tail < 0 {
		return bad("--tail %d: want a number of lines >= 1 (or 0 for all)", f.Tail)
	}
	if f.File != "" && (f.File == "." || f.File == ".." || strings.ContainsRune(f.File, '/')) {
		return bad("--file %q: want a log file name such as stdout or stderr, without '/'", f.File)
	}
	return nil
}

// ExitCode prints the outcome of Run to notes and returns the command's code from the one table
// (docs/running.md#exit-codes): no logs to print 1, an application the ResourceManager does not
// know (id) 5, a cluster that cannot be reached or did not answer within --timeout 4, interrupted
// (ctx done) 130. The message quotes names from the files and the cluster: it is sanitized.
func ExitCode(ctx context.Context, notes io.Writer, id string, err error) int {
	var na *NotAvailableError
	switch {
	case ctx.Err() != nil:
		if err != nil {
			fmt.Fprintf(notes, "yarn-am logs: %s\n", client.Sanitize(err.Error()))
		}
		return contract.ExitInterrupted
	case err == nil:
		return contract.ExitOK
	case errors.As(err, &na):
		fmt.Fprintf(notes, "yarn-am logs: %s\n", client.Sanitize(err.Error()))
		return contract.ExitAppFailed
	case errors.Is(err, yarnrpc.ErrApplicationNotFound):
		err = client.UnknownApp(id)
	}
	fmt.Fprintf(notes, "yarn-am logs: %s\n", client.Sanitize(err.Error()))
	return client.ExitCode(err)
}
