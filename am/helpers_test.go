package am

import (
	"os/exec"

	"github.com/yarn-am/yarn-am/container/contract"
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
