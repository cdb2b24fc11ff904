package yarnrpc

import (
	"fmt"
	"os"
	"regexp"

	"github.com/yarn-am/yarn-am/internal/hadoop"
	"github.com/yarn-am/yarn-am/internal/text"
)

// userNameRe is what a user name may be: the portable characters of POSIX user names (letters, digits,
// '.', '_', '-', not starting with '-' or '.'), the '@' of directory users (alice@corp) and a machine
// account's trailing '$'. A name with '/', a space or a control character is none: HADOOP_USER_NAME
// becomes a path segment of the staging directory (/user/<user>/.yarn-am/<id>), which kill deletes
// (docs/security.md#logging-in).
var userNameRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._@-]*\$?$`)

// MaxUserName bounds a user name (systemd's limit; useradd's is 32).
const MaxUserName = 256

// CheckUserName says what is wrong with a user name, or nil.
func CheckUserName(u string) error {
	if len(u) <= MaxUserName && userNameRe.MatchString(u) {
		return nil
	}
	return fmt.Errorf("not a user name: use letters, digits, '.', '_', '-' and '@' (not starting with '.' or '-'), at most %d characters", MaxUserName)
}

// CheckHadoopUserName checks HADOOP_USER_NAME, which CurrentUser takes when it is set, before a command
// connects anywhere; the error names the variable and a bounded prefix of its value.
func CheckHadoopUserName() error {
	u, set := os.LookupEnv(hadoop.EnvUserName)
	if !set || u == "" {
		return nil
	}
	if err := CheckUserName(u); err != nil {
		return fmt.Errorf("%s=%s is %w", hadoop.EnvUserName, text.Quote(u), err)
	}
	return nil
}
