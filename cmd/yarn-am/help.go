package main

import (
	"embed"
	"strings"

	"github.com/yarn-am/yarn-am/jobfile"
)

// helpTexts are the commands' usage texts, help/<command>.txt, kept as text: prose that docs/commands.md
// shows verbatim (TestREADMEDocumentsEveryCommand), without Go's quoting around it.
//
//go:embed help/*.txt
var helpTexts embed.FS

// helpParts are the pieces that several usage texts share, by the name they are written with: the
// login flags of every client command, the exit codes' line that ends a client command's usage (the
// whole table: docs/running.md#exit-codes; the codes are contract.Exit*), and the AM's failure-policy
// flags (jobfile's, which names them once for the flags and the job file's [policy] table).
var helpParts = strings.NewReplacer(
	"{{login-flags}}", helpText("login-flags"),
	"{{exit-codes}}", helpText("exit-codes"),
	"{{policy-flags}}", jobfile.PolicyFlagsUsage(),
)

// usage is the usage text of a command, its shared pieces filled in.
func usage(name string) string { return helpParts.Replace(helpText(name)) }

// helpText is help/<name>.txt without its last line break. A missing file is a mistake of the build:
// the binary stops at its start, and so does every test of this package.
func helpText(name string) string {
	b, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("yarn-am: no usage text: " + err.Error())
	}
	return strings.TrimSuffix(string(b), "\n")
}
