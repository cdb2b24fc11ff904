package main

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"
)

// The AM's and the launcher's log lines carry milliseconds (the Flink row's waterfall reads the AM's
// moments from them); logrus's default would be whole seconds.
func TestLogLinesCarryMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	prevOut, prevFmt, prevLvl := logrus.StandardLogger().Out, logrus.StandardLogger().Formatter, logrus.GetLevel()
	t.Cleanup(func() {
		logrus.SetOutput(prevOut)
		logrus.SetFormatter(prevFmt)
		logrus.SetLevel(prevLvl)
	})
	setLogLevel(&buf, logrus.InfoLevel)
	logrus.Info("am: requesting TaskExecutor containers")
	m := regexp.MustCompile(`^time="([^"]+)" level=info msg="am: requesting TaskExecutor containers"`).FindStringSubmatch(buf.String())
	require.NotNil(t, m, "log line: %q", buf.String())
	require.Regexp(t, `T\d\d:\d\d:\d\d\.\d{3}`, m[1])
	at, err := time.Parse(time.RFC3339Nano, m[1])
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), at, time.Minute)
}
