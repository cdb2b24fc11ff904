package flink

import (
	"testing"

	"github.com/yarn-am/yarn-am/testkit/docmap"
)

// TestGroundNamesNothingAbove: a ground file (doc.go, "Files") uses no package-level name that a
// file above the ground defines, so the feature files stand on it and not it on them. A name a
// ground file needs from a feature belongs on the ground.
func TestGroundNamesNothingAbove(t *testing.T) {
	docmap.CheckGround(t, ".", "ground.go", "spec.go", "layered.go", "defines.go", "kept.go", "livejob.go", "pack.go")
}
