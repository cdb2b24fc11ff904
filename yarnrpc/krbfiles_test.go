package yarnrpc

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/test/testdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKerberosFilesAreBounded: krb5.conf, a keytab, a ticket cache and a token file that are a named
// pipe or /dev/zero are refused promptly, naming the file, instead of blocking or reading forever.
func TestKerberosFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(conf, []byte(testdata.KRB5_CONF), 0o600))
	pipe := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(pipe, 0o600))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, make([]byte, MaxTokenFileBytes+1), 0o600))

	for _, tc := range []struct {
		name string
		run  func() error
		want []string
	}{
		{"krb5.conf a named pipe", func() error { _, err := LoginKerberos(KerberosOptions{Krb5Config: pipe}); return err }, []string{pipe, "named pipe"}},
		{"krb5.conf /dev/zero", func() error { _, err := LoginKerberos(KerberosOptions{Krb5Config: "/dev/zero"}); return err }, []string{"/dev/zero", "a device"}},
		{"keytab a named pipe", func() error {
			_, err := LoginKerberos(KerberosOptions{Krb5Config: conf, Keytab: pipe, Principal: "bob"})
			return err
		}, []string{"keytab " + pipe, "named pipe"}},
		{"keytab /dev/zero", func() error {
			_, err := LoginKerberos(KerberosOptions{Krb5Config: conf, Keytab: "/dev/zero", Principal: "bob"})
			return err
		}, []string{"keytab /dev/zero", "a device"}},
		{"ticket cache a named pipe", func() error { _, err := LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: pipe}); return err }, []string{pipe, "named pipe"}},
		{"token file a named pipe", func() error { _, err := ReadCredentialsFile(pipe); return err }, []string{pipe, "named pipe"}},
		{"token file /dev/zero", func() error { _, err := ReadCredentialsFile("/dev/zero"); return err }, []string{"/dev/zero", "a device"}},
		{"token file over the limit", func() error { _, err := ReadCredentialsFile(big); return err }, []string{big, "larger than 16 MiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- tc.run() }()
			select {
			case err := <-done:
				require.Error(t, err)
				for _, w := range tc.want {
					assert.Contains(t, err.Error(), w)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("still reading after 10s: a named pipe or a device must be refused, not read")
			}
		})
	}
}

// TestCraftedKerberosFilesDoNotPanic: a ticket cache gokrb5's parser panics on (a one-byte file is
// enough: slice bounds out of range) gives an error naming the file, not a Go runtime crash.
func TestCraftedKerberosFilesDoNotPanic(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(conf, []byte(testdata.KRB5_CONF), 0o600))
	for name, data := range map[string][]byte{"one byte": []byte("\x05"), "header only": {5, 4}, "truncated": truncatedCCache(t),
		"2^31 addresses": hugeCountCCache(0x7fffffff), "2^31 name components": hugeNameCCache()} {
		cc := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		require.NoError(t, os.WriteFile(cc, data, 0o600))
		_, err := LoginKerberos(KerberosOptions{Krb5Config: conf, CCache: cc})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ticket cache "+cc, name)
		assert.NotContains(t, err.Error(), "\n", name)
	}
	for name, data := range map[string][]byte{"one byte": {5}, "version only": {5, 2}, "huge length": {5, 2, 0x7f, 0xff, 0xff, 0xff, 0}} {
		kt := filepath.Join(dir, "kt-"+strings.ReplaceAll(name, " ", "-"))
		require.NoError(t, os.WriteFile(kt, data, 0o600))
		_, err := LoginKerberos(KerberosOptions{Krb5Config: conf, Keytab: kt, Principal: "bob"})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "keytab "+kt, name)
	}
}

// ccPrincipal is a version 4 principal u@R.
var ccPrincipal = []byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 'R', 0, 0, 0, 1, 'u'}

// ccHeader is a version 4 ticket cache's start: magic, version, a header with one KDC offset field.
var ccHeader = []byte{5, 4, 0, 12, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0}

// hugeCountCCache is a ticket cache whose one credential claims n addresses: gokrb5 makes a slice of n
// (36 GB for 2^31), which kills the process with "out of memory" before any recover.
func hugeCountCCache(n uint32) []byte {
	b := append(append([]byte{}, ccHeader...), ccPrincipal...)
	b = append(b, ccPrincipal...)                                // client
	b = append(b, ccPrincipal...)                                // server
	b = append(b, 0, 18, 0, 0, 0, 0)                             // key type, empty key
	b = append(b, make([]byte, 16+1+4)...)                       // times, is-skey, flags
	b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n)) // address count
	return append(b, make([]byte, 64)...)
}

// hugeNameCCache is a ticket cache whose default principal claims 2^31-1 empty name components.
func hugeNameCCache() []byte {
	b := append(append([]byte{}, ccHeader...), 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 'R')
	return append(b, make([]byte, 64)...)
}

func truncatedCCache(t *testing.T) []byte {
	b, err := hex.DecodeString(testdata.CCACHE_TEST)
	require.NoError(t, err)
	return b[:len(b)/2]
}

// FuzzParseKerberosFiles: no bytes make the parse path of a ticket cache or a keytab panic, loop or
// exhaust memory through our wrappers.
func FuzzParseKerberosFiles(f *testing.F) {
	cc, _ := hex.DecodeString(testdata.CCACHE_TEST)
	kt, _ := hex.DecodeString(testdata.KEYTAB_TESTUSER1_TEST_GOKRB5)
	f.Add(cc)
	f.Add(kt)
	f.Add([]byte("\x05"))
	f.Add(hugeCountCCache(3))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parseCCache(data)
		_, _ = parseKeytab(data)
	})
}
