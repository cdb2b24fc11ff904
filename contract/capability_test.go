package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCapabilityFitsCountAdd(t *testing.T) {
	node := Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}
	te := Capability{"memory-mb": 3072, "vcores": 1, "yarn.io/gpu": 1}

	assert.Empty(t, node.Fits(te))
	assert.Equal(t, []string{"memory-mb", "yarn.io/fpga"}, node.Fits(Capability{"memory-mb": 9000, "vcores": 8, "yarn.io/fpga": 1}),
		"short of memory, and of a type the node does not have at all; sorted")
	assert.Empty(t, node.Fits(Capability{"yarn.io/fpga": 0}), "asking 0 of a type fits anywhere")

	assert.Equal(t, 2, node.Count(te), "memory allows 2, GPUs 4: the smallest")
	assert.Equal(t, 0, node.Count(Capability{"memory-mb": 1, "yarn.io/fpga": 1}), "a type the node lacks")
	assert.Equal(t, 0, node.Count(Capability{}), "a container of nothing is not counted")
	assert.Equal(t, 0, Capability{"memory-mb": -1}.Count(Capability{"memory-mb": 1}), "never negative")

	rest := node.Add(Capability{"memory-mb": 1024, "vcores": 1}, -1)
	assert.Equal(t, Capability{"memory-mb": 7168, "vcores": 7, "yarn.io/gpu": 4}, rest)
	assert.Equal(t, Capability{"memory-mb": 8192, "vcores": 8, "yarn.io/gpu": 4}, node, "Add leaves c as it was")
	assert.Equal(t, 2, rest.Count(te))
	assert.Equal(t, Capability{"memory-mb": 6144, "vcores": 2, "yarn.io/gpu": 2}, Capability(nil).Add(te, 2))
	assert.Equal(t, "memory-mb=3072 vcores=1 yarn.io/gpu=1", te.String())
}
