package client

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// FollowToEnd follows an application until it ends or the user interrupts (interrupted closed), as
// submit and follow do (name: the command, for its messages), and returns the command's exit code: 0
// SUCCEEDED, 1 ended otherwise or lost, 130 interrupted. With killOnInterrupt an interrupt kills the
// application and waits for it.
func (s *Session) FollowToEnd(followCtx context.Context, name string, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto,
	interrupted <-chan struct{}, killOnInterrupt bool, stdout, stderr io.Writer) int {
	id := yarnrpc.FormatApplicationID(appID)
	// As the owner where this machine holds the application's secret: the failed workers' stderr tails.
	res := Follow(followCtx, rm, appID, s.OwnerReader(id), stdout)
	select {
	case <-interrupted:
		if killOnInterrupt {
			fmt.Fprintf(stdout, "interrupted: killing %s\n", id)
			ctx, c := context.WithTimeout(context.Background(), 2*time.Minute)
			defer c()
			if err := s.KillAndWait(ctx, rm, appID, stdout); err != nil {
				fmt.Fprintf(stderr, "yarn-am %s: %v\n", name, err)
				return 1
			}
			return contract.ExitInterrupted
		}
		fmt.Fprintf(stdout, "\nstopped following %s; it keeps running.\n  follow it again:  yarn-am follow %s\n  kill it:          yarn-am kill %s\n", id, id, id)
		return contract.ExitInterrupted
	default:
	}
	if res.Err != nil {
		fmt.Fprintf(stderr, "yarn-am %s: following %s: %v\n  follow it again with: yarn-am follow %s\n", name, id, res.Err, id)
		return 1
	}
	// An application that ended without its AM ever running (rejected, AM container failed) leaves
	// its staging directory behind: remove it.
	cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
	defer ccancel()
	if err := s.EnsureStagingGone(cctx, s.User, id, stdout, 3*time.Second, true); err != nil {
		fmt.Fprintf(stderr, "yarn-am %s: %v\n", name, err)
	}
	if res.Succeeded() {
		fmt.Fprintf(stdout, "%s %s\n", Stamp(), res.Outcome())
		return 0
	}
	fmt.Fprintf(stderr, "yarn-am %s: %s\n", name, res.Outcome())
	return 1
}
