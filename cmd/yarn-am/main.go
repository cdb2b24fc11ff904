// Command yarn-am runs GPU/FPGA workers on Hadoop 3.1+ YARN. One binary plays three roles: the client
// (submit, check, status, ...), the ApplicationMaster (am) and the in-container launcher (launch).
//
// Each subcommand lives in its own file and registers itself in commands via init; flags are parsed
// inside the subcommand's own function, and its usage text is help/<name>.txt (help.go). What the
// commands do is in the packages they wire: container/client, container/logs, container/launcher,
// am and internal/cli (docs/design.md#floors).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/text"
)

// command is one subcommand of yarn-am.
type command struct {
	name    string
	summary string // one line, shown by `yarn-am help`
	usage   string // full help text, shown by `yarn-am help <name>`; must match the README
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("yarn-am: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printOverview(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help":
		name = "help"
	case "-v", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "yarn-am: unknown command %q%s; run 'yarn-am help' for the list of commands\n", name, suggestCommand(name))
		return contract.ExitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

// suggestCommand returns ` (did you mean "x"?)` for the command closest to name, or "".
func suggestCommand(name string) string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	return text.DidYouMean(name, names)
}

func printOverview(w io.Writer) {
	fmt.Fprintln(w, "yarn-am runs GPU/FPGA workers on Hadoop YARN.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: yarn-am <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'yarn-am help <command>' for the flags of one command.")
}

var helpUsage = usage("help")

func init() {
	register(&command{
		name:    "help",
		summary: "show the commands, or the flags of one command",
		usage:   helpUsage,
		run: func(args []string, stdout, stderr io.Writer) int {
			fs := flag.NewFlagSet("help", flag.ContinueOnError)
			pos, code, ok := parseCommand(fs, args, "help", helpUsage, -1, "", stdout, stderr)
			if !ok {
				return code
			}
			if len(pos) > 1 {
				return usageError(stderr, "help", fmt.Errorf("unexpected argument %q; give at most one command", pos[1]))
			}
			if len(pos) == 0 {
				printOverview(stdout)
				return 0
			}
			c, ok := commands[pos[0]]
			if !ok {
				fmt.Fprintf(stderr, "yarn-am help: unknown command %q%s; run 'yarn-am help' for the list of commands\n", pos[0], suggestCommand(pos[0]))
				return contract.ExitUsage
			}
			fmt.Fprintln(stdout, strings.TrimSpace(c.usage))
			return 0
		},
	})
}
