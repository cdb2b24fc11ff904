package contract

import (
	"bytes"
	"testing"
)

// A sealed keytab holds none of its bytes in the clear and opens only with its key, unchanged.
func TestSealedKeytabOpensOnlyWithItsKey(t *testing.T) {
	kt := bytes.Repeat([]byte("KEYTAB-SECRET-KEY-MATERIAL"), 10)
	key, err := NewKeytabKey()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := SealKeytab(key, kt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("KEYTAB-SECRET")) {
		t.Fatal("the sealed keytab holds its bytes in the clear")
	}
	got, err := OpenKeytab(key, sealed)
	if err != nil || !bytes.Equal(got, kt) {
		t.Fatalf("OpenKeytab = %q, %v", got, err)
	}
	other, _ := NewKeytabKey()
	if _, err := OpenKeytab(other, sealed); err == nil {
		t.Error("another key opens it")
	}
	changed := append([]byte{}, sealed...)
	changed[len(changed)-1] ^= 1
	if _, err := OpenKeytab(key, changed); err == nil {
		t.Error("a changed byte goes unnoticed")
	}
	if _, err := OpenKeytab(key, kt); err == nil {
		t.Error("a plain keytab is taken for a sealed one")
	}
	if _, err := OpenKeytab(nil, sealed); err == nil {
		t.Error("no key opens it")
	}
}
