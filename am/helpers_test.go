package am

import (
	"os/exec"

	"google.golang.org/protobuf/proto"

	"github.com/yarn-am/yarn-am/yarnrpc"
	"github.com/yarn-am/yarn-am/yarnrpc/hadooppb"
)

type fakeStaged struct{}

func (fakeStaged) Resource(name, alias string) (*hadooppb.StringLocalResourceMapProto, error) {
	e := ManifestEntry{Alias: alias, URL: "hdfs://127.0.0.1:9000/user/u/.yarn-am/app/" + name, Size: 99, Timestamp: 1}
	lr, err := e.LocalResource()
	if err != nil {
		return nil, err
	}
	lr.Key = proto.String(alias)
	return lr, nil
}

func credsWithAMRM() *yarnrpc.Credentials {
	c := yarnrpc.NewCredentials()
	c.Tokens["amrm"] = yarnrpc.Token{Identifier: []byte("amrm-id"), Password: []byte("pw"), Kind: yarnrpc.AMRMTokenKind}
	c.Secrets[SecretAlias] = []byte("s3cret")
	return c
}

func execBash(script string) *exec.Cmd { return exec.Command("/bin/bash", "-c", script) }
