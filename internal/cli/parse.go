package cli

import (
	"flag"
	"fmt"
	"io"
)

// ParseInterleaved parses flags that may come before and after positional arguments (`check job.toml
// -D k=v`); "--" ends the flags. -Dkey=value is read as -D key=value.
func ParseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	args = SplitJoinedDefines(args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// Parse parses a command's flags and positional arguments: want of them (-1 = any; what names them
// in the error, "one application id"). It returns flag.ErrHelp for --help, and an error in the
// usage texts' words for a bad flag, a wrong number of arguments or --keytab without --principal.
func Parse(fs *flag.FlagSet, args []string, name string, want int, what string) ([]string, error) {
	fs.SetOutput(io.Discard)
	pos, err := ParseInterleaved(fs, args)
	switch {
	case err == flag.ErrHelp:
		return nil, err
	case err != nil:
		return nil, FlagError(fs, err)
	case want >= 0 && len(pos) != want && want == 0:
		return nil, fmt.Errorf("unexpected argument %q; %s takes no arguments", pos[0], name)
	case want >= 0 && len(pos) != want:
		return nil, fmt.Errorf("give exactly %s (got %d arguments)", what, len(pos))
	}
	kt, pr := fs.Lookup("keytab"), fs.Lookup("principal")
	if kt != nil && pr != nil && kt.Value.String() != "" && pr.Value.String() == "" {
		return nil, fmt.Errorf("--keytab %s needs --principal (the principal whose keys the keytab holds, e.g. alice@EXAMPLE.COM)", kt.Value.String())
	}
	return pos, nil
}
