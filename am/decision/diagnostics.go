package decision

import (
	"fmt"
	"strings"

	"github.com/yarn-am/yarn-am/internal/text"
)

// maxDiagPerContainer bounds one container's part of the application's diagnostics.
const maxDiagPerContainer = 600

// cutText returns s if it has at most n bytes, else its start cut at the last line end or space
// before n (never inside a word or a UTF-8 sequence, unless a single word is longer than n) and " …".
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := text.Cut(s, n)
	if i := strings.LastIndexByte(head, '\n'); i > n/2 {
		head = head[:i]
	} else if i := strings.LastIndexAny(head, " \t"); i > n/2 {
		head = head[:i]
	} else {
		head = strings.ToValidUTF8(head, "") // what YARN's diagnostics carry is text: no stray bytes
	}
	return strings.TrimRight(head, " \t\n") + " …"
}

// containerFailureLine is one failed container in the application's diagnostics: where, how it
// ended and its own diagnostics, each once.
func ContainerFailureLine(c Container) string {
	line := fmt.Sprintf("%s on %s %s", c.ID, c.Node, Describe(c.Exit.Status, c.Exit.Class))
	if d := strings.TrimSpace(c.Exit.Diagnostics); d != "" {
		line += ": " + CutText(d, maxDiagPerContainer)
	}
	return line
}
