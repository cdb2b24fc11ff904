package hadoop

import (
	"strings"
	"testing"
)

func TestNameNodeAddrRefusesPortsOutOfRange(t *testing.T) {
	for _, bad := range []string{"hdfs://nn:99999", "hdfs://nn:0", "hdfs://nn:65536"} {
		if _, err := NameNodeAddr(bad); err == nil || !strings.Contains(err.Error(), "1-65535") {
			t.Errorf("NameNodeAddr(%q) = %v, want a port error", bad, err)
		}
	}
	if a, err := NameNodeAddr("hdfs://nn:65535"); err != nil || a != "nn:65535" {
		t.Errorf("NameNodeAddr(hdfs://nn:65535) = %q, %v", a, err)
	}
}
