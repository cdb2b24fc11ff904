//go:build !race

package logs

// raceAllocFactor: see race_on_test.go.
const raceAllocFactor = 1
