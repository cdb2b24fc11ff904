package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

// Connect loads the Hadoop configuration, logs in and connects to the ResourceManager, as every
// client command starts. Its errors carry their exit code (ExitCode): a configuration directory or
// login input that cannot be used is invalid input (3), a cluster that cannot be reached 4.
func Connect(lo LoginOptions, notes io.Writer) (*Session, *yarnrpc.ApplicationClient, error) {
	conf, err := LoadConfig()
	if err != nil {
		return nil, nil, &ExitError{Code: contract.ExitInvalidInput, Err: err}
	}
	s, err := Login(conf, lo, notes)
	if err != nil {
		return nil, nil, invalidUnlessCluster(err)
	}
	rm, err := s.ConnectRM()
	if err != nil {
		return nil, nil, invalidUnlessCluster(err) // e.g. the configuration names no usable RM address
	}
	return s, rm, nil
}

// invalidUnlessCluster gives err the exit code of invalid input (3) unless it is the cluster's
// (unreachable, rejected) or a local file's.
func invalidUnlessCluster(err error) error {
	if ExitCode(err) == contract.ExitAppFailed {
		return &ExitError{Code: contract.ExitInvalidInput, Err: err}
	}
	return err
}

// Report asks the ResourceManager for an application's report (id: the application id as the user
// wrote it). An application the ResourceManager does not know is said in the same words for every
// command, with the exit code 5.
func Report(ctx context.Context, rm *yarnrpc.ApplicationClient, appID *hadooppb.ApplicationIdProto, id string) (*hadooppb.ApplicationReportProto, error) {
	r, err := rm.GetApplicationReport(ctx, appID)
	if errors.Is(err, yarnrpc.ErrApplicationNotFound) {
		return nil, UnknownApp(id)
	}
	return r, err
}

// UnknownApp is the error of an application id the ResourceManager does not know (exit code 5).
func UnknownApp(id string) error {
	return &ExitError{Code: contract.ExitRejected, Err: fmt.Errorf("the ResourceManager does not know %s (finished applications are forgotten after a while; 'yarn-am list --all' shows what it knows)", id)}
}
