package client

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/yarn-am/yarn-am/contract"
)

// Shipping the user's keytab to the AM (submit --principal/--keytab), so that a job can outlive its
// delegation tokens' maximum lifetime: the AM logs in from it and gets new tokens.

// StageKeytab copies the keytab at local into the staging directory st with owner-only permission
// (0600, whatever the local file's mode) and adds it to the AM's local resources. The keytab's bytes
// are never logged; the upload is not reported through Progress either.
func StageKeytab(fsys FileSystem, st *Staged, defaultFS, local string) error {
	f, err := os.Open(local)
	if err != nil {
		return fmt.Errorf("--keytab %s: %w", local, err)
	}
	defer f.Close()
	remote := path.Join(st.Dir, contract.StagedKeytab)
	w, err := fsys.Create(remote, 0o600)
	if err != nil {
		return fmt.Errorf("staging the keytab to %s: %w", remote, err)
	}
	_, err = io.Copy(w, f)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("staging the keytab to %s: %w", remote, err)
	}
	lr, err := statResource(fsys, strings.TrimSuffix(defaultFS, "/"), remote, contract.StagedKeytab, contract.TypeFile)
	if err != nil {
		return err
	}
	st.AM = append(st.AM, lr)
	return nil
}
