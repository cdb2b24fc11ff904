package hadoop

import "testing"

func TestNodeHost(t *testing.T) {
	for in, want := range map[string]string{
		"nm1.example.com:8041":      "nm1.example.com",
		"10.0.0.7:45454":            "10.0.0.7",
		"[::1]:8041":                "::1",
		"[fe80::1%eth0]:8041":       "fe80::1%eth0",
		"[2001:db8::7]:45454":       "2001:db8::7",
		"nm1.example.com":           "nm1.example.com",
		"::1":                       "::1", // a bare IPv6 address has no port to drop
		"2001:db8::7":               "2001:db8::7",
		"[2001:db8::7]":             "2001:db8::7",
		"localhost:0":               "localhost",
		"":                          "",
		":8041":                     "",
		"host.with.trailing:colon:": "host.with.trailing:colon:", // not host:port: kept whole
	} {
		if got := NodeHost(in); got != want {
			t.Errorf("NodeHost(%q) = %q, want %q", in, got, want)
		}
	}
}
