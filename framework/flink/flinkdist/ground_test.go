package flinkdist

import (
	"testing"

	"github.com/yarn-am/yarn-am/testkit/docmap"
)

// TestGroundNamesNothingAbove: ground.go (doc.go, "Files") uses no package-level name that another
// file of the package defines, so the files stand on it and not it on them.
func TestGroundNamesNothingAbove(t *testing.T) { docmap.CheckGround(t, ".", "ground.go") }
