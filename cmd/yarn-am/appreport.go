package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// unknownApp says that the ResourceManager does not know the application id, in the same words for
// every command, and returns its exit code (5).
func unknownApp(stderr io.Writer, name, id string) int {
	fmt.Fprintf(stderr, "yarn-am %s: the ResourceManager does not know %s (finished applications are forgotten after a while; 'yarn-am list --all' shows what it knows)\n", name, id)
	return contract.ExitRejected
}

// appReport asks the ResourceManager for an application's report. On an error it has said what went
// wrong and ok is false; code is the command's exit code then (5 for an id the RM does not know).
func appReport(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, name, id string, stderr io.Writer) (r *hadooppb.ApplicationReportProto, code int, ok bool) {
	r, err := rm.GetApplicationReport(ctx, appID)
	switch {
	case err == nil:
		return r, 0, true
	case errors.Is(err, yarnrpc.ErrApplicationNotFound):
		return nil, unknownApp(stderr, name, id), false
	}
	return nil, fail(stderr, name, err, 0), false
}
