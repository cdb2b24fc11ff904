package contract

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// KeytabKeyAlias is the secret key, in the AM's credentials only, of the AES-256 key that seals the
// staged keytab (StagedKeytab). The keytab sits in the staging directory, which every container of
// the user can read through the HDFS delegation token, TaskExecutors of this and of other
// applications included; sealed, it is of use only with this key, which travels in the AM's launch
// context alone: the AM takes it out of its credentials before anything copies them
// (TestKeytabKeyStaysInTheAM).
const KeytabKeyAlias = "yarn-am.keytab-key"

// sealedKeytabMagic starts a sealed keytab; it is also the AEAD's additional data.
var sealedKeytabMagic = []byte("yarn-am sealed keytab v1\n")

// MaxKeytab bounds the keytab yarn-am ships: a keytab holds a few keys of a few principals, some
// hundred bytes each.
const MaxKeytab = 1 << 20

// NewKeytabKey returns a fresh random key for SealKeytab.
func NewKeytabKey() ([]byte, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("generating the keytab's key: %w", err)
	}
	return k, nil
}

// SealKeytab encrypts and authenticates a keytab with key (AES-256-GCM, a random nonce).
func SealKeytab(key, keytab []byte) ([]byte, error) {
	aead, err := keytabAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append(append([]byte{}, sealedKeytabMagic...), nonce...)
	return aead.Seal(out, nonce, keytab, sealedKeytabMagic), nil
}

// OpenKeytab returns the keytab SealKeytab sealed with key; a wrong key or changed bytes are an error.
func OpenKeytab(key, sealed []byte) ([]byte, error) {
	aead, err := keytabAEAD(key)
	if err != nil {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(sealed, sealedKeytabMagic)
	if !ok || len(rest) < aead.NonceSize() {
		return nil, errors.New("not a keytab sealed by yarn-am submit")
	}
	kt, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], sealedKeytabMagic)
	if err != nil {
		return nil, errors.New("the sealed keytab does not open with the key in the AM's credentials (changed in HDFS, or from another submit)")
	}
	return kt, nil
}

func keytabAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("the keytab's key (%s in the AM's credentials) has %d bytes, not 32", KeytabKeyAlias, len(key))
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}
