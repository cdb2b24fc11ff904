package contract

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// MaxFlinkDefines bounds EnvFlinkDefines' value (the -D Flink keys of a job: a few KiB at most).
const MaxFlinkDefines = 1 << 20

// EncodeFlinkDefines renders -D Flink keys for EnvFlinkDefines: a JSON array of "key=value" in
// unpadded URL-safe base64, so that no quote or shell character of a value meets YARN's launch
// script, which drops the quotes of a plain JSON value (docs/flink.md#configuration).
func EncodeFlinkDefines(defines []string) (string, error) {
	b, err := json.Marshal(defines)
	if err != nil {
		return "", err
	}
	s := base64.RawURLEncoding.EncodeToString(b)
	if len(s) > MaxFlinkDefines {
		return "", fmt.Errorf("the -D Flink keys take %d bytes encoded; at most %d", len(s), MaxFlinkDefines)
	}
	return s, nil
}

// DecodeFlinkDefines reads EnvFlinkDefines' value ("" = none).
func DecodeFlinkDefines(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	if len(v) > MaxFlinkDefines {
		return nil, fmt.Errorf("%s is %d bytes; at most %d", EnvFlinkDefines, len(v), MaxFlinkDefines)
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	var defines []string
	if err == nil {
		err = json.Unmarshal(b, &defines)
	}
	if err != nil {
		shown := v
		if len(shown) > 200 {
			shown = shown[:200] + "..."
		}
		return nil, fmt.Errorf("%s=%q: want the -D Flink keys as the AM encodes them (EncodeFlinkDefines): %w", EnvFlinkDefines, shown, err)
	}
	return defines, nil
}
