package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// killProgressEvery is how often KillAndWait says it is still waiting when the state does not change.
const killProgressEvery = 5 * time.Second

// KillAndWait kills the application, waits for a terminal state and removes the staging directory if
// the AM did not.
func (s *Session) KillAndWait(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, out io.Writer) error {
	id := yarnrpc.FormatApplicationID(appID)
	r, err := rm.GetApplicationReport(ctx, appID)
	if err != nil {
		if errors.Is(err, yarnrpc.ErrApplicationNotFound) {
			return fmt.Errorf("the ResourceManager does not know %s ('yarn-am list --all' shows what it knows)", id)
		}
		return err
	}
	user := r.GetUser()
	if IsTerminal(r.GetYarnApplicationState()) {
		fmt.Fprintf(out, "%s %s had already ended: %s, final status %s\n", Stamp(), id, StateName(r.GetYarnApplicationState()), FinalName(r.GetFinalApplicationStatus()))
	} else {
		if _, err := rm.KillApplication(ctx, appID, "killed by "+yarnrpc.CurrentUser()+" with yarn-am kill"); err != nil {
			return fmt.Errorf("killing %s: %w", id, err)
		}
		fmt.Fprintf(out, "%s %s: kill requested (state %s); waiting for the ResourceManager to report it KILLED (its NodeManagers stop the ApplicationMaster and the TaskExecutors first)\n", Stamp(), id, StateName(r.GetYarnApplicationState()))
		last := r.GetYarnApplicationState()
		start, said := time.Now(), time.Now()
		for !IsTerminal(last) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s did not reach KILLED in time (last state %s); check with 'yarn-am status %s'", id, StateName(last), id)
			case <-time.After(500 * time.Millisecond):
			}
			r, err = rm.GetApplicationReport(ctx, appID)
			if err != nil {
				continue
			}
			if st := r.GetYarnApplicationState(); st != last {
				fmt.Fprintf(out, "%s %s %s\n", Stamp(), id, StateName(st))
				last, said = st, time.Now()
			} else if time.Since(said) >= killProgressEvery {
				fmt.Fprintf(out, "%s %s still %s after %s; waiting for KILLED\n", Stamp(), id, StateName(st), time.Since(start).Round(time.Second))
				said = time.Now()
			}
		}
		if last != hadooppb.YarnApplicationStateProto_KILLED {
			fmt.Fprintf(out, "%s %s ended %s (final status %s) before the kill took effect\n", Stamp(), id, StateName(last), FinalName(r.GetFinalApplicationStatus()))
		}
	}
	return s.EnsureStagingGone(ctx, user, id, out, 10*time.Second, false)
}

// EnsureStagingGone waits up to wait for the AM to remove the staging directory, then removes it.
// quiet leaves out the line saying the directory is gone when nothing had to be done.
func (s *Session) EnsureStagingGone(ctx context.Context, user, id string, out io.Writer, wait time.Duration, quiet bool) error {
	fsys, err := s.DialStaging(user)
	if err != nil {
		return fmt.Errorf("checking the staging directory: %w", err)
	}
	defer fsys.Close()
	dir := StagingDir(user, id)
	deadline := time.Now().Add(wait)
	if !quiet {
		fmt.Fprintf(out, "%s waiting up to %s for the ApplicationMaster to remove the staging directory %s\n", Stamp(), wait, dir)
	}
	for {
		_, err := fsys.Stat(dir)
		if errors.Is(err, os.ErrNotExist) {
			if !quiet {
				fmt.Fprintf(out, "%s staging directory %s is gone\n", Stamp(), dir)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("checking the staging directory %s: %w", dir, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := RemoveStaging(fsys, user, id); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s removed the staging directory %s (the ApplicationMaster had not)\n", Stamp(), dir)
	return nil
}
