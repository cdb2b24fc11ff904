// Package cli holds what every yarn-am command's command line needs and none of them owns: the flag
// types (Timeout, Defines, NonEmpty, CheckDir), parsing flags that come before and after the
// arguments (Parse), the flag package's errors said in the usage texts' words (FlagError), one watch
// for Ctrl-C over a command's whole run (OnInterrupt), and the revision `yarn-am version` names
// (Revision). cmd/yarn-am declares each command's flags and wires them to the packages that do the
// work (docs/design.md#floors); this is the part of that which is logic, tested here.
//
// A leaf: it imports only the standard library and internal/text, and returns errors, never exit
// codes (the codes are contract's, a floor above).
//
// Files: flags.go (Timeout, Defines, SplitJoinedDefines, NonEmpty, Path, CheckDir, Short), parse.go
// (Parse, ParseInterleaved), flagerror.go (FlagError), interrupt.go (OnInterrupt), revision.go
// (Revision).
package cli
