package yarnrpc

import (
	"bytes"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// DelegationTokenDates reads the issue date and maximum date (the end of its maximum lifetime, past
// which no renewal helps) from a delegation token's identifier: HDFS's Writable layout (version byte
// 0, owner, renewer, real user, issue date, max date, ...) or YARN's protobuf layout (issueDate = 4,
// maxDate = 5). ok is false for identifiers of another shape.
func DelegationTokenDates(t Token) (issue, max time.Time, ok bool) {
	id := t.Identifier
	if len(id) == 0 {
		return issue, max, false
	}
	if id[0] == 0 { // Writable, version 0
		r := bytes.NewReader(id[1:])
		for i := 0; i < 3; i++ {
			if _, err := readText(r); err != nil {
				return issue, max, false
			}
		}
		is, err := readVLong(r)
		if err != nil {
			return issue, max, false
		}
		mx, err := readVLong(r)
		if err != nil {
			return issue, max, false
		}
		return time.UnixMilli(is), time.UnixMilli(mx), mx > 0
	}
	var is, mx int64
	for b := id; len(b) > 0; {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return issue, max, false
		}
		b = b[l:]
		if typ == protowire.VarintType {
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return issue, max, false
			}
			switch num {
			case 4:
				is = int64(v)
			case 5:
				mx = int64(v)
			}
			b = b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(num, typ, b); l < 0 {
			return issue, max, false
		}
		b = b[l:]
	}
	return time.UnixMilli(is), time.UnixMilli(mx), mx > 0
}
