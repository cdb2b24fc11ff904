package book

// Book is the AM's bookkeeping, one value of each concern's type; the AM holds one and guards it
// with its mutex (package doc, "Locking").
type Book struct {
	// Asks: the outstanding asks and what is still to send of them (asks.go).
	Asks Asks
	// Excl: the blacklist changes still to send (exclusions.go).
	Excl Exclusions
	// Nodes: the node listings of the status document and of locality spreading (nodes.go).
	Nodes Nodes
}

// New returns an empty book.
func New() Book {
	return Book{Asks: NewAsks(), Excl: NewExclusions()}
}
