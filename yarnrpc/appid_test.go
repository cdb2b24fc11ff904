package yarnrpc

import (
	"strings"
	"testing"
)

func TestParseApplicationID(t *testing.T) {
	id, err := ParseApplicationID("application_1700000000000_0042")
	if err != nil {
		t.Fatal(err)
	}
	if id.GetClusterTimestamp() != 1700000000000 || id.GetId() != 42 {
		t.Fatalf("got %v", id)
	}
	for _, bad := range []string{
		"application_1700000000000_0000", // the RM never makes number 0
		"application_1700000000000_-1",
		"application_0_0001",
		"application_1700000000000",
		"container_1700000000000_0001",
		"application_1700000000000_99999999999",
		"application_x_0001",
	} {
		if _, err := ParseApplicationID(bad); err == nil || !strings.Contains(err.Error(), "is not an application id") {
			t.Errorf("%q: want a refusal, got %v", bad, err)
		}
	}
}
