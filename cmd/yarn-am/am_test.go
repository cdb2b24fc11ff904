package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAMRejectsAFinishedHistoryBelowOne(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runAM([]string{"--job", "job.toml", "--finished-history", "0"}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "--finished-history=0: must be at least 1 (the default is 1000)")
}
