package flinkdist

import (
	"testing"
)

// A near miss is a key that is not known, not a plugin's, and within two edits (or a change of case)
// of a known one.
func TestNearMiss(t *testing.T) {
	known := []string{"parallelism.default", "rest.port", "scheduler-mode", "taskmanager.numberOfTaskSlots"}
	for key, want := range map[string]string{
		"taskmanager.numberOfTaskSlot":      "taskmanager.numberOfTaskSlots",
		"taskmanager.numberoftaskslots":     "taskmanager.numberOfTaskSlots",
		"parallelism.defualt":               "parallelism.default",
		"rest.prot":                         "rest.port",
		"schedular-mode":                    "scheduler-mode",
		"taskmanager.numberOfTaskSlots":     "",
		"rest.ports.x":                      "",
		"my.own.key":                        "",
		"metrics.reporter.prom.port":        "",
		"external-resource.gpu.amont":       "",
		"s3.acess-key":                      "",
		"fs.defualt-scheme":                 "",
		"taskmanager.numberOfTaskSlotsssss": "",
	} {
		if got := NearMiss(key, known); got != want {
			t.Errorf("NearMiss(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestKeyClassAndConfigKey(t *testing.T) {
	for name, want := range map[string]bool{
		"org/apache/flink/configuration/CoreOptions.class":             true,
		"org/apache/flink/configuration/SecurityOptions$Sub.class":     true,
		"org/apache/flink/configuration/ConfigConstants.class":         true,
		"org/apache/flink/runtime/Other.class":                         false,
		"org/apache/flink/shaded/netty4/io/netty/ChannelOptions.class": false,
		"com/example/MyOptions.class":                                  false,
	} {
		if keyClass(name) != want {
			t.Errorf("keyClass(%q) = %v", name, !want)
		}
	}
	for s, want := range map[string]bool{
		"taskmanager.numberOfTaskSlots": true, "scheduler-mode": true, "none": false,
		"The number of slots.": false, "a.b c": false,
	} {
		if configKey.MatchString(s) != want {
			t.Errorf("configKey(%q) = %v", s, !want)
		}
	}
}
