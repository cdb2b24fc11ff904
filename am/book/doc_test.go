package book

import (
	"testing"

	"github.com/yarn-am/yarn-am/testkit/docmap"
)

// TestDocNamesEveryFile: the package comment's file list (doc.go, "Files") names every non-test Go
// file of the package, so a new file cannot join without saying what it holds.
func TestDocNamesEveryFile(t *testing.T) { docmap.Check(t, ".") }
