// Package builtin is the registry of the frameworks compiled into yarn-am: importing it registers
// each (framework.Register, from the framework's init). It is the only package that imports a
// framework's package (internal/layers checks it); cmd/yarn-am imports it, and so does a test that
// needs the real frameworks.
package builtin

import (
	_ "github.com/yarn-am/yarn-am/framework/flink" // [flink]: Flink's JobManager and TaskManagers
	_ "github.com/yarn-am/yarn-am/framework/gang"  // taskexecutor.gang: the training gang's ranks
)
