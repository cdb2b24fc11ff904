package am

import (
	"fmt"
	"maps"
	"slices"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// addWorkerSecrets adds a framework's secrets (framework.AM.WorkerSecrets) to the AM's credentials,
// from which the driver's token file and every TaskExecutor's launch context are built
// (taskExecutorCredentials), and to the refresher's, whose replacements overwrite the TaskExecutors'
// token files (nil without a keytab). An alias the credentials hold already (the application
// secret, the authority's certificate) is refused: a framework must not replace them.
func addWorkerSecrets(creds *yarnrpc.Credentials, refresher *tokenRefresher, secrets map[string][]byte) error {
	for _, alias := range slices.Sorted(maps.Keys(secrets)) {
		if contract.IsDriverSecret(alias) {
			return fmt.Errorf("the framework's worker secret %q: an alias starting with %q is the driver's alone, never a TaskExecutor's", alias, contract.DriverSecretPrefix)
		}
		if _, taken := creds.Secrets[alias]; taken {
			return fmt.Errorf("the framework's worker secret %q: the application's credentials already hold that alias", alias)
		}
	}
	for alias, s := range secrets {
		creds.Secrets[alias] = s
	}
	if refresher != nil && len(secrets) > 0 {
		refresher.addSecrets(secrets)
	}
	return nil
}

// addSecrets adds secrets to the credentials the refresher serves now and to every later
// replacement's. It replaces the credentials rather than changing them: a reader may hold the old.
func (r *tokenRefresher) addSecrets(secrets map[string][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.extra == nil {
		r.extra = map[string][]byte{}
	}
	maps.Copy(r.extra, secrets)
	c := yarnrpc.NewCredentials()
	maps.Copy(c.Tokens, r.creds.Tokens)
	maps.Copy(c.Secrets, r.creds.Secrets)
	maps.Copy(c.Secrets, secrets)
	r.creds, r.hdts = c, c.Marshal()
}
