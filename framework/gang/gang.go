// Package gang is the training gang as a framework (docs/running.md#gang-mode-distributed-training): a job with
// taskexecutor.gang = true runs its TaskExecutors as the ranks of one round, and before each rank's
// worker starts its launcher waits for the round's rendezvous and hands the worker its rank and rank
// 0's address in the layout torchrun and JAX read (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT) beside yarn-am's own names and a rendezvous.json. Holding the round's
// allocations and numbering the ranks is the AM's gang scheduling (am/gang.go), which any framework's
// workers may use; this package is what the ranks' workers are given.
package gang

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sirupsen/logrus"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/framework"
	"github.com/yarn-am/yarn-am/jobfile"
)

// Name is the framework's name, the value of contract.EnvFramework in a gang's TaskExecutors.
const Name = "gang"

// Gang is the training gang.
type Gang struct{ framework.Base }

func init() { framework.Register(Gang{}) }

// Name is "gang".
func (Gang) Name() string { return Name }

// Selects a job whose TaskExecutors form a gang (taskexecutor.gang = true).
func (Gang) Selects(j *jobfile.Job) bool { return j.TaskExecutor.Gang }

// PrepareWorker waits at the gang's barrier until the AM publishes this rank, writes the rendezvous
// file and returns the rank's environment.
func (Gang) PrepareWorker(ctx context.Context, w framework.Worker) ([]string, error) {
	if w.Rendezvous == nil {
		return nil, errors.New("a rank of a gang needs the AM's address (" + contract.EnvReportURL + ")")
	}
	log := w.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	log.Info("yarn-am launch: waiting for the other ranks of the gang")
	r, err := w.Rendezvous(ctx)
	if err != nil {
		return nil, err
	}
	file, err := writeFile(w.Dir, r)
	if err != nil {
		return nil, fmt.Errorf("cannot write the rendezvous file: %w", err)
	}
	log.WithFields(logrus.Fields{"round": r.Round, "rank": r.Rank, "world_size": r.WorldSize, "local_rank": r.LocalRank,
		"master": fmt.Sprintf("%s:%d", r.MasterAddr, r.MasterPort)}).Info("yarn-am launch: rank assigned")
	return Env(r, file), nil
}

// Env is the worker's environment for its rank: yarn-am's names and the ones PyTorch's distributed
// launch reads.
func Env(r *contract.Rendezvous, file string) []string {
	it := strconv.Itoa
	return []string{
		contract.EnvRank + "=" + it(r.Rank), "RANK=" + it(r.Rank),
		contract.EnvWorldSize + "=" + it(r.WorldSize), "WORLD_SIZE=" + it(r.WorldSize),
		contract.EnvLocalRank + "=" + it(r.LocalRank), "LOCAL_RANK=" + it(r.LocalRank),
		"LOCAL_WORLD_SIZE=" + it(r.LocalWorldSize),
		contract.EnvRound + "=" + it(r.Round),
		contract.EnvMasterAddr + "=" + r.MasterAddr, "MASTER_ADDR=" + r.MasterAddr,
		contract.EnvMasterPort + "=" + it(r.MasterPort), "MASTER_PORT=" + it(r.MasterPort),
		contract.EnvRendezvousFile + "=" + file,
	}
}

// writeFile writes the rendezvous as JSON into dir and returns its absolute path.
func writeFile(dir string, r *contract.Rendezvous) (string, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	p, err := filepath.Abs(filepath.Join(dir, contract.RendezvousFileName))
	if err != nil {
		return "", err
	}
	return p, os.WriteFile(p, append(data, '\n'), 0o644)
}
