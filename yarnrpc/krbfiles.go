package yarnrpc

import (
	"errors"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// This file reads the Kerberos files a user or a neighbour controls (krb5.conf, a keytab, a ticket
// cache) through the bounded reader and hands gokrb5 the bytes: gokrb5's own loaders open any path
// (a named pipe blocks them, /dev/zero exhausts memory), and its parsers index the bytes without
// checking their lengths, so a crafted file makes them panic (slice bounds out of range). Each parse
// runs under recoverParse, which turns such a panic into an error naming the file
// (docs/running.md#limits-on-input-files, TestKerberosFilesAreBounded, FuzzParseKerberosFiles).

// Bounds on the Kerberos files: real ones are a few KiB.
const (
	MaxKrb5ConfBytes = 1 << 20
	MaxKeytabBytes   = 1 << 20
)

// recoverParse runs parse, the one call into a gokrb5 parser, and turns a panic in it into an error
// saying that what names the file is damaged: no Go runtime crash reaches a user over a crafted file.
func recoverParse(what string, parse func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("damaged: not a %s yarn-am can read (its parser failed: %v)", what, r)
		}
	}()
	return parse()
}

// readKrb5Config reads krb5.conf as config.Load would, through the bounded reader. gokrb5 returns a
// usable configuration alongside config.UnsupportedDirective; the caller decides.
func readKrb5Config(path string) (*config.Config, error) {
	b, err := boundedread.ReadFile("Kerberos configuration", path, "a krb5.conf", MaxKrb5ConfBytes)
	if err != nil {
		return nil, err
	}
	var cfg *config.Config
	err = recoverParse("Kerberos configuration", func() error {
		var perr error
		cfg, perr = config.NewFromString(string(b))
		return perr
	})
	return cfg, err
}

// readKeytab reads a keytab through the bounded reader.
func readKeytab(path string) (*keytab.Keytab, error) {
	b, err := boundedread.ReadFile("keytab", path, "a keytab (ktutil or kadmin writes one)", MaxKeytabBytes)
	if err != nil {
		return nil, err
	}
	return parseKeytab(b)
}

// parseKeytab parses a keytab's bytes (read by readKeytab through the bounded reader).
func parseKeytab(b []byte) (*keytab.Keytab, error) {
	kt := keytab.New()
	if err := recoverParse("keytab", func() error { return kt.Unmarshal(b) }); err != nil {
		// gokrb5's own message can quote the keytab's bytes, key material: say only what is wrong.
		return nil, errors.New("damaged or truncated: not a keytab yarn-am can read (ktutil or kadmin writes one)")
	}
	return kt, nil
}

// parseCCache parses a ticket cache's bytes (read by loadOwnCCache through the bounded reader).
func parseCCache(b []byte) (*credentials.CCache, error) {
	if err := checkCCache(b); err != nil {
		return nil, err
	}
	cc := new(credentials.CCache)
	if err := recoverParse("ticket cache", func() error { return cc.Unmarshal(b) }); err != nil {
		return nil, err
	}
	return cc, nil
}
