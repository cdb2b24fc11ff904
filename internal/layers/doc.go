// Package layers holds no code, only a test: folders are floors (docs/design.md#floors). Every package
// of the module sits on a floor, written in one table at the top of layers_test.go, lowest first, and
// a package may import only packages on a lower floor (or, for the pairs that table names, its own).
// The ground floor is the standard-library leaves under internal/ (Hadoop's names, message text, /proc,
// bounded reads), then the wire (yarnrpc), the contracts the processes share, the external-resource
// framework, the job file, the framework seam and its implementations, the three roles (client,
// launcher, AM) and last the binary. Test support (testkit/fakecluster, testkit/itest) is a floor of
// its own above them all, which only tests may import.
//
// TestFloors runs `go list` over the module and fails on an import that goes sideways or up, so the rule
// is checked where it is written, as Kubernetes' import-boss checks its .import-restrictions files.
package layers
