package client

import "github.com/yarn-am/yarn-am/internal/text"

// Sanitize makes a string that the AM, a NodeManager or the ResourceManager supplied safe to print on
// a terminal (text.Sanitize: escape sequences and control characters other than newline and tab are
// removed). Everything the client prints from those sources goes through it at print time
// (TestPrintedStringsCannotDriveTheTerminal).
func Sanitize(s string) string { return text.Sanitize(s) }
