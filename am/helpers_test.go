package am

import (
	"net/http"
	"os/exec"
	"time"

	"github.com/yarn-am/yarn-am/am/decision"
	"github.com/yarn-am/yarn-am/am/web"
	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

type fakeStaged struct{}

func (fakeStaged) Resource(name, alias string) (contract.LocalResource, error) {
	return contract.LocalResource{Alias: alias, URL: "hdfs://127.0.0.1:9000/user/u/.yarn-am/app/" + name, Size: 99, Timestamp: 1}, nil
}

func credsWithAMRM() *yarnrpc.Credentials {
	c := yarnrpc.NewCredentials()
	c.Tokens["amrm"] = yarnrpc.Token{Identifier: []byte("amrm-id"), Password: []byte("pw"), Kind: yarnrpc.AMRMTokenKind}
	c.Secrets[contract.SecretAlias] = []byte("s3cret")
	return c
}

func execBash(script string) *exec.Cmd { return exec.Command("/bin/bash", "-c", script) }

// te is a TaskExecutor's capability with one GPU, as the decision's tests ask for it.
var te = contract.Capability{"memory-mb": 512, "vcores": 1, "yarn.io/gpu": 1}

// t0 is the tests' start of time.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func alloc(id string, ask int64, c contract.Capability) decision.Allocation {
	return decision.Allocation{ID: id, Node: "n1:1", AskID: ask, Resources: c}
}

// Handler returns the whole API as served on HTTPS, with secret authorising writes.
func (a *am) Handler(secret string) http.Handler {
	return web.Handler(a.Web(), web.Options{Secret: secret, Secure: true})
}

// observedLocked is the next plan's Observed at now, as applyPlan makes it.
func (a *am) observedLocked(now time.Time) decision.Observed {
	return a.book.Observed(&a.rec, a.policy, a.book.Moment(now, a.driver.exited(), a.book.Want.Spec(a.cfg.Spec), a.cfg.ElasticInterval, a.cfg.GangTimeout))
}
