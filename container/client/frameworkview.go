package client

import (
	"fmt"
	"io"
	"time"

	"github.com/yarn-am/yarn-am/contract"
)

// printFramework prints what the job's framework says of its work (contract.Status.Framework: a
// Flink job's id, state, parallelism, last checkpoint) as a block under its title, every name and
// value sanitized; nothing for a framework that says nothing.
func printFramework(w io.Writer, f *contract.FrameworkStatus) {
	if f == nil || (len(f.Details) == 0 && f.Error == "") {
		return
	}
	title := f.Title
	if title == "" {
		title = "Framework"
	}
	head := Cell(title) + ":"
	if !f.At.IsZero() {
		head += " (as of " + f.At.Local().Format(time.TimeOnly) + ")"
	}
	fmt.Fprintln(w, head)
	for _, d := range f.Details {
		fmt.Fprintf(w, "  %-16s %s\n", Cell(d.Name)+":", Cell(d.Value))
	}
	if f.Error != "" {
		fmt.Fprintf(w, "  %-16s %s\n", "Not readable:", Cell(f.Error))
	}
}
