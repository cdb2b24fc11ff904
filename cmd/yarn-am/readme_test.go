package main

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// TestREADMEDocumentsEveryCommand keeps `yarn-am help <cmd>` and the README's command reference in
// step: every command's full usage text must appear verbatim in README.md. Regenerate the section with
// `make readme-commands` after changing a usage text.
func TestREADMEDocumentsEveryCommand(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("reading README.md: %v", err)
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
			t.Errorf("README.md does not contain the usage of %q verbatim; run 'make readme-commands' and paste its output into the Command reference section.\nwant:\n%s", n, usage)
		}
		if !strings.HasPrefix(usage, "Usage: yarn-am "+n) {
			t.Errorf("usage of %q must start with %q", n, "Usage: yarn-am "+n)
		}
	}
}
