//go:build flink

package flinkdist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The key fixtures that removedkeys.go's table is tested against (testdata/flink-keys-<version>.txt)
// are what the real home of that version declares (KnownKeys), so the table cannot drift from the
// jars it was read from. A home of a version without a fixture fails: write one with
// YARN_AM_FLINK_KEYS_WRITE=1.
func TestKeyFixturesAreTheHomesKeys(t *testing.T) {
	home := needFlinkHome(t)
	keys, err := home.KnownKeys("")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(keys, "\n") + "\n"
	fixture := filepath.Join("testdata", "flink-keys-"+home.Version+".txt")
	if os.Getenv("YARN_AM_FLINK_KEYS_WRITE") == "1" {
		if err := os.WriteFile(fixture, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatalf("Flink %s has no key fixture (%v): write it with YARN_AM_FLINK_KEYS_WRITE=1", home.Version, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the keys of %s (%d keys): rewrite it with YARN_AM_FLINK_KEYS_WRITE=1 and review removedkeys.go", fixture, home.Dir, len(keys))
	}
	t.Logf("Flink %s declares %d keys, as %s says", home.Version, len(keys), fixture)
}
