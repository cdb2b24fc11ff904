package client

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
	"github.com/yarn-am/yarn-am/internal/boundedread"
)

// Shipping the user's keytab to the AM (submit --principal/--keytab), so that a job can outlive its
// delegation tokens' maximum lifetime: the AM logs in from it and gets new tokens.

// StageKeytab seals the keytab at local under a fresh key (contract.SealKeytab), copies it into the
// staging directory st with owner-only permission (0600, whatever the local file's mode) and adds it
// to the AM's local resources. It returns the key, which goes into the AM's credentials alone
// (AMOptions.KeytabKey): the staging directory is readable by every container of the user through the
// HDFS delegation token, and sealed the keytab is of no use to them (TestStagedKeytabIsSealed). The
// keytab's bytes are never logged; the upload is not reported through Progress either.
func StageKeytab(fsys FileSystem, st *Staged, defaultFS, local string) (key []byte, err error) {
	kt, err := boundedread.ReadFile("--keytab", local, "a keytab file", contract.MaxKeytab)
	if err != nil {
		return nil, fmt.Errorf("--keytab %s: %w", local, err)
	}
	key, err = contract.NewKeytabKey()
	if err != nil {
		return nil, err
	}
	sealed, err := contract.SealKeytab(key, kt)
	if err != nil {
		return nil, err
	}
	remote := path.Join(st.Dir, contract.StagedKeytab)
	w, err := fsys.Create(remote, 0o600)
	if err != nil {
		return nil, fmt.Errorf("staging the keytab to %s: %w", remote, err)
	}
	_, err = io.Copy(w, bytes.NewReader(sealed))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("staging the keytab to %s: %w", remote, err)
	}
	lr, err := statResource(fsys, strings.TrimSuffix(defaultFS, "/"), remote, contract.StagedKeytab, contract.TypeFile)
	if err != nil {
		return nil, err
	}
	st.AM = append(st.AM, lr)
	return key, nil
}
