package am

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScaleDownStopsTheNewestActive(t *testing.T) {
	cs := []Container{
		{ID: "c1", Phase: Running},
		{ID: "c2", Phase: Completed},
		{ID: "c3", Phase: Running},
		{ID: "c4", Phase: Stopping},
		{ID: "c5", Phase: Launching},
	}
	names := func(cs []Container) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	assert.Nil(t, ScaleDown(cs, 3))
	assert.Equal(t, []string{"c5"}, names(ScaleDown(cs, 2)))
	assert.Equal(t, []string{"c5", "c3"}, names(ScaleDown(cs, 1)))
	assert.Equal(t, []string{"c5", "c3", "c1"}, names(ScaleDown(cs, 0)))
	assert.Equal(t, []string{"c5", "c3", "c1"}, names(ScaleDown(cs, -1)))
}

func TestRequirementsUpdateValidate(t *testing.T) {
	n := func(i int) *int { return &i }
	assert.NoError(t, RequirementsUpdate{Instances: n(0)}.Validate())
	assert.ErrorContains(t, RequirementsUpdate{}.Validate(), `"instances"`)
	assert.ErrorContains(t, RequirementsUpdate{Instances: n(-1)}.Validate(), `"instances": -1: want 0..100000`)
}
