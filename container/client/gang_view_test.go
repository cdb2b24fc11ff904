package client

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-am/yarn-am/contract"
)

func TestStatusPrintsTheGangRound(t *testing.T) {
	var b bytes.Buffer
	PrintAMStatus(&b, &contract.Status{State: contract.StateRunning, Gang: &contract.GangStatus{Round: 1, Formed: true, Size: 2, Held: 1, MinInstances: 2, MaxInstances: 3}})
	assert.Contains(t, b.String(), "Gang:         round 1 running with 2 TaskExecutors (WORLD_SIZE 2); elastic: 2 to 3; 1 held\n")

	assert.Equal(t, "round 0 forming; 3 held", gangLine(contract.GangStatus{Held: 3, MinInstances: 4, MaxInstances: 4}), "a rigid gang has no bounds to show")
	b.Reset()
	PrintAMStatus(&b, &contract.Status{State: contract.StateRunning})
	assert.NotContains(t, b.String(), "Gang:")
}
