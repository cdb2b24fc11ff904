package yarnrpc

import (
	"strings"
	"testing"
)

func TestCheckUserName(t *testing.T) {
	for _, ok := range []string{"alice", "alice.smith", "svc_etl-1", "alice@corp", "HOST01$", "_apt", "1001"} {
		if err := CheckUserName(ok); err != nil {
			t.Errorf("CheckUserName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"../../tmp", "alice\nroot", "a b/c", ".hidden", "-x", "..", "a\x00b", "a/b", "é", strings.Repeat("a", MaxUserName+1), "a$b"} {
		if err := CheckUserName(bad); err == nil {
			t.Errorf("CheckUserName(%.20q) = nil, want an error", bad)
		}
	}
}

func TestCheckHadoopUserNameIsBounded(t *testing.T) {
	t.Setenv("HADOOP_USER_NAME", "../"+strings.Repeat("x", 1<<20))
	err := CheckHadoopUserName()
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "HADOOP_USER_NAME") {
		t.Fatalf("CheckHadoopUserName() = %.500v, want a short error naming HADOOP_USER_NAME", err)
	}
}

func TestParseContainerIDRefusesNonPositiveParts(t *testing.T) {
	for _, bad := range []string{"container_1700000000000_0001_-1_000001", "container_1700000000000_0001_00_000001", "container_1700000000000_-1_01_000001", "container_0_0001_01_000001"} {
		if _, err := ParseContainerID(bad); err == nil {
			t.Errorf("ParseContainerID(%q) = nil error", bad)
		}
	}
	if _, err := ParseContainerID("container_e17_1700000000000_0001_01_000001"); err != nil {
		t.Errorf("a valid id: %v", err)
	}
}
