//go:build race

package logs

// raceAllocFactor widens the allocation bounds of TestManySmallBlocksAreCheap under -race: the race
// detector makes sync.Pool drop what it holds at random, so io.Discard's copy buffers (pooled) are
// allocated afresh for most blocks (measured: 157 times the file's size instead of 20).
const raceAllocFactor = 8
