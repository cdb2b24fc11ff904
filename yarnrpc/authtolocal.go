package yarnrpc

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Hadoop's auth_to_local rules (hadoop.security.auth_to_local), enough of them to name the renewer
// of delegation tokens as the RM does: RULE:[n:format](match)s/pattern/replacement/[g] and DEFAULT.

// KeyAuthToLocal holds the rules mapping Kerberos principals to short (OS) user names.
const KeyAuthToLocal = "hadoop.security.auth_to_local"

var ruleRE = regexp.MustCompile(`^RULE:\[(\d+):([^\]]*)\](?:\(([^)]*)\))?(?:s/([^/]*)/([^/]*)/(g)?)?(/L)?$`)

// ShortNameOf maps principal (name/host@REALM) to its short name with the rules of
// hadoop.security.auth_to_local (default: DEFAULT, the first component). A principal no rule
// matches is an error naming the key, as in Hadoop.
func (c *Config) ShortNameOf(principal string) (string, error) {
	rules := strings.Fields(c.GetString(KeyAuthToLocal, "DEFAULT"))
	name, realm, _ := strings.Cut(principal, "@")
	comps := strings.Split(name, "/")
	for _, r := range rules {
		if r == "DEFAULT" {
			return comps[0], nil
		}
		m := ruleRE.FindStringSubmatch(r)
		if m == nil {
			return "", fmt.Errorf("%s: rule %q is not RULE:[n:format](regex)s/pattern/replacement/[g] or DEFAULT", KeyAuthToLocal, r)
		}
		n, _ := strconv.Atoi(m[1])
		if n != len(comps) {
			continue
		}
		s := m[2]
		s = strings.ReplaceAll(s, "$0", realm)
		for i := len(comps); i >= 1; i-- {
			s = strings.ReplaceAll(s, "$"+strconv.Itoa(i), comps[i-1])
		}
		if m[3] != "" {
			re, err := regexp.Compile("^(?:" + m[3] + ")$")
			if err != nil {
				return "", fmt.Errorf("%s: rule %q: %w", KeyAuthToLocal, r, err)
			}
			if !re.MatchString(s) {
				continue
			}
		}
		if m[4] != "" || m[5] != "" {
			re, err := regexp.Compile(m[4])
			if err != nil {
				return "", fmt.Errorf("%s: rule %q: %w", KeyAuthToLocal, r, err)
			}
			repl := strings.ReplaceAll(m[5], "$", "$$")
			if m[6] == "g" {
				s = re.ReplaceAllString(s, repl)
			} else if loc := re.FindStringIndex(s); loc != nil {
				s = s[:loc[0]] + re.ReplaceAllString(s[loc[0]:loc[1]], repl) + s[loc[1]:]
			}
		}
		if m[7] != "" {
			s = strings.ToLower(s)
		}
		return s, nil
	}
	return "", fmt.Errorf("%s: no rule maps %s to a user name", KeyAuthToLocal, principal)
}
