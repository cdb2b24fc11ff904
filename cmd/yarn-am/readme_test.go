package main

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// TestREADMEDocumentsEveryCommand keeps `yarn-am help <cmd>` and the command reference in
// docs/commands.md in step: every command's full usage text must appear there verbatim. Regenerate it
// with `make readme-commands` after changing a usage text.
func TestREADMEDocumentsEveryCommand(t *testing.T) {
	data, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatalf("reading docs/commands.md: %v", err)
	}
	readme := string(data)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		usage := strings.TrimSpace(commands[n].usage)
		if !strings.Contains(readme, usage) {
			t.Errorf("docs/commands.md does not contain the usage of %q verbatim; run 'make readme-commands' and paste its output there.\nwant:\n%s", n, usage)
		}
		if !strings.HasPrefix(usage, "Usage: yarn-am "+n) {
			t.Errorf("usage of %q must start with %q", n, "Usage: yarn-am "+n)
		}
	}
}
