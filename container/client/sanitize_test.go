package client

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-am/yarn-am/contract"
)

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode ✓":                             "plain text, ünïcode ✓",
		"two\nlines\tand a tab":                             "two\nlines\tand a tab",
		"\x1b[31mred\x1b[0m":                                "red",
		"\x1b[2J\x1b[Hcleared":                              "cleared",
		"\x1b]52;c;ZWNobyBwd25lZA==\x07after":               "after",
		"\x1b]52;c;ZWNobyBwd25lZA==\x1b\\after":             "after",
		"\x1b]0;title":                                      "",
		"bell\x07 bs\x08 cr\r del\x7f":                      "bell bs cr del",
		"c1 csi \u009b31m red, nel \u0085 st \u009c":        "c1 csi  red, nel  st ",
		"osc8 \x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\": "osc8 link",
		"bad utf8 \xff\xfe":                                 "bad utf8 \ufffd\ufffd",
		"esc at end \x1b":                                   "esc at end ",
		"\x1bc reset":                                       " reset",
	} {
		assert.Equal(t, want, Sanitize(in), "%q", in)
	}
}

// Strings from the AM, the NMs and the RM reach the user's terminal through status and the attached
// submit: an ANSI colour, a screen clear or an OSC 52 clipboard write in an event message, a
// container's diagnostics, a node name or the RM's diagnostics must arrive as text, not as terminal
// commands.
func TestPrintedStringsCannotDriveTheTerminal(t *testing.T) {
	osc52 := "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"
	st := &contract.Status{
		State: "RUNNING", Diagnostics: "AM \x1b[2Jsays" + osc52,
		ExcludedNodes: []string{"bad\x1b[31mnode"},
		Containers: []contract.ContainerStatus{{
			ID: "container_1\x1b[8m", Node: "n1\x9b1A", State: contract.Completed,
			Infos:       map[string][]contract.Info{"gpu": {{"index": "0\x1b]52;c;eA==\x07"}}},
			ExitStatus:  new(int32),
			Diagnostics: "died" + osc52 + "\x1b[1A",
		}},
		Events: []contract.Event{{ID: 1, Time: time.Now(), Type: "container-failed", Message: "worker said " + osc52 + "\x1b[?1049h hi"}},
	}
	var out bytes.Buffer
	PrintAMStatus(&out, st)
	PrintReport(&out, ReportView{ID: "application_1_0001", Name: "n\x1b]0;pwn\x07", Diagnostics: "rm " + osc52, TrackingURL: "http://x/\x1b[5m"})
	got := out.String()
	for _, bad := range []string{"\x1b", "\x07", "\x9b", "\u009b"} {
		assert.NotContains(t, got, bad)
	}
	assert.Contains(t, got, "worker said  hi")
	assert.Contains(t, got, "AM says")
	assert.Contains(t, got, "badnode")
	assert.Contains(t, got, "container_1")
	assert.True(t, strings.Contains(got, "gpu=0"), got)
}

// TestUnreachableAMLineCannotDriveTheTerminal: status's line for an AM that answered with an error
// carries the AM's URL and reason phrase, both chosen by the application's owner: sanitized and bounded.
func TestUnreachableAMLineCannotDriveTheTerminal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	reason := "Teapot \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[2J" + strings.Repeat("x", 1<<16)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = io.WriteString(c, "HTTP/1.1 500 "+reason+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	}()
	_, _, ferr := FetchAMStatus(context.Background(), "http://"+ln.Addr().String()+"/")
	require.Error(t, ferr)
	var out bytes.Buffer
	PrintAMUnreachable(&out, "http://"+ln.Addr().String()+"/\x1b[5m"+strings.Repeat("y", 1<<16)+"/", ferr)
	got := out.String()
	for _, bad := range []string{"\x1b", "\x07"} {
		assert.NotContains(t, got, bad)
	}
	assert.Contains(t, got, "Teapot")
	assert.Less(t, len(got), 1024, "the line is bounded: %d bytes", len(got))
}
