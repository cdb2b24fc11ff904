//go:build integration

package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/testkit/itest"
)

// QuickstartRoot is where the quick starts' paths start: the repository's root, which a test of any
// package reaches (the tests run in their package's directory).
var QuickstartRoot = itest.Root()

// QSBlock is one fenced block of a page: its info string, its body and its caption, the last
// non-blank line between the previous block and the opening fence.
type QSBlock struct{ Info, Body, Caption string }

// QSBlocks returns the page's fenced blocks in order.
func QSBlocks(t *testing.T, page string) []QSBlock {
	t.Helper()
	var blocks []QSBlock
	var cur *QSBlock
	var body strings.Builder
	last := ""
	sc := bufio.NewScanner(strings.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &QSBlock{Info: strings.TrimPrefix(line, "```"), Caption: last}
			body.Reset()
		case cur != nil && line == "```":
			cur.Body = body.String()
			blocks = append(blocks, *cur)
			cur, last = nil, ""
		case cur != nil:
			body.WriteString(line + "\n")
		case strings.TrimSpace(line) != "":
			last = line
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "an unclosed fence")
	return blocks
}

// QSReadPage is the file at rel, a path from the repository's root.
func QSReadPage(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(QuickstartRoot, rel))
	require.NoError(t, err)
	return string(data)
}

// QSRun runs the yarn-am binary in the repository root, where the page's paths start.
func QSRun(t *testing.T, timeout time.Duration, args []string) Result {
	t.Helper()
	return yarnAMIn(t, QuickstartRoot, timeout, args...)
}

// QSLogSection is one file of `yarn-am logs`: "==> CONTAINER on NODE: FILE (N bytes) <==" and its lines.
type QSLogSection struct {
	Container, Node, File string
	Lines                 []string
}

var qsLogHeader = regexp.MustCompile(`^==> (container_\S+) on (\S+): (\S+) \(\d+ bytes\) <==$`)

// QSLogSections splits the output of `yarn-am logs` into its files.
func QSLogSections(out string) []QSLogSection {
	var secs []QSLogSection
	for _, line := range strings.Split(out, "\n") {
		if m := qsLogHeader.FindStringSubmatch(line); m != nil {
			secs = append(secs, QSLogSection{Container: m[1], Node: m[2], File: m[3]})
			continue
		}
		if len(secs) > 0 && line != "" {
			secs[len(secs)-1].Lines = append(secs[len(secs)-1].Lines, line)
		}
	}
	return secs
}

// QSPageCommands returns the `bin/yarn-am` lines of the page's sh blocks, application ids as APP.
// Commands for a real cluster are written as `yarn-am ...` and are not run.
func QSPageCommands(t *testing.T, page string) []string {
	t.Helper()
	var cmds []string
	for _, b := range QSBlocks(t, page) {
		if b.Info != "sh" {
			continue
		}
		for _, line := range strings.Split(b.Body, "\n") {
			if rest, ok := strings.CutPrefix(line, "bin/yarn-am "); ok {
				if i := strings.Index(rest, "  #"); i >= 0 {
					rest = rest[:i]
				}
				cmds = append(cmds, AppIDRe.ReplaceAllString(strings.TrimSpace(rest), "APP"))
			}
		}
	}
	return cmds
}
