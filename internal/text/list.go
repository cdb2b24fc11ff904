package text

import (
	"fmt"
	"strings"
)

// MaxListed bounds the problems (or warnings) one message lists, whichever command prints it (check,
// submit, launch, discover, am): thousands of bad keys give a message of a screen ending "and K
// more", not megabytes (TestBulletsAreBounded, TestBadInputs' "20,001" rows).
const MaxListed = 20

// Bullets is items as the lines of a list, each "\n  - item", at most MaxListed of them; more items
// end it with "\n  - and K more" and then tail (" (fix these and run check again)", or "").
func Bullets(items []string, tail string) string {
	var b strings.Builder
	for i, it := range items {
		if i == MaxListed {
			fmt.Fprintf(&b, "\n  - and %d more%s", len(items)-i, tail)
			break
		}
		b.WriteString("\n  - ")
		b.WriteString(it)
	}
	return b.String()
}
