// Package text holds the helpers every layer uses to put a user's value into a message: Quote (a
// bounded, Go-quoted value), BoundArgs (a message's arguments with long values cut), Cut (the one
// rune-safe prefix every cutter uses, each with its own limit), DidYouMean (a suggestion for a
// misspelt name) and Within (is a user's value of any length within n edits of a name?), Sanitize (another program's text made safe for a terminal) and Bullets (a list of
// problems, at most MaxListed of them).
//
// They are text, not a framework: a leaf that imports only the standard library, so that no package has
// to climb up a floor (to resources, say) to borrow a string function (docs/design.md#floors).
//
// Files: quote.go (Quote, BoundArgs, Cut), suggest.go (DidYouMean, EditDistance, Within), sanitize.go
// (Sanitize), list.go (Bullets, MaxListed).
package text
