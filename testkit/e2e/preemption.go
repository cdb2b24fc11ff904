//go:build integration && preemption

package e2e

import (
	"github.com/yarn-am/yarn-am/contract"
)

// AMEvents is the part of `yarn-am status --json` the preemption tests read: the AM's latest events.
type AMEvents struct {
	Report struct {
		State       string `json:"state"`
		FinalStatus string `json:"finalStatus"`
		Diagnostics string `json:"diagnostics"`
	} `json:"report"`
	AM *struct {
		Events []contract.Event `json:"events"`
	} `json:"am"`
}
