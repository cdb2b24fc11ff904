package decision

import "fmt"

// gangRestart says why the current round must restart ("" if it need not): ended is a member that
// ended other than by success; formed says members were started; a started round whose size no
// longer matches the declared requirement restarts at the new size.
func gangRestart(spec Spec, ended *Container, formed bool, active, succeeded int) string {
	if ended != nil {
		return fmt.Sprintf("%s on %s %s", ended.ID, ended.Node, Describe(ended.Exit.Status, ended.Exit.Class))
	}
	if formed && active+succeeded != spec.Instances && !(spec.Mode != Service && active == 0) {
		return fmt.Sprintf("the requirement changed to %d TaskExecutors", spec.Instances)
	}
	return ""
}
