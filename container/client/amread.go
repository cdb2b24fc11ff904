package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/yarn-am/yarn-am/am/driverclient"
	"github.com/yarn-am/yarn-am/contract"
)

// This file reads the AM as the application's owner may (docs/security.md#what-anonymous-readers-see).
// The plain tracking URL, which anyone who reaches the AM's node can read, serves a failed worker's and
// the driver's exit without their stderr tails; the HTTPS API serves the tails to whoever sends the
// application's secret. submit holds the secret in memory (Session.OwnerReader), status and follow
// load what submit kept (LoadAppSecret); with it they read the status and the event stream over HTTPS
// from the AM the application's authority certified (driverclient sends the secret to no other), and
// without it they read anonymously and say once why the tails are missing
// (TestOwnerSeesTheWorkersStderrTail).

// AppKey is what the application's owner holds: its secret and its TLS authority's certificate.
type AppKey struct {
	Secret string
	CACert []byte
}

// OwnerReader reads app's AM with the key submit kept on this machine, anonymously when there is
// none (another user's application, or one submitted from another machine).
func OwnerReader(app string) *AMReader {
	secret, ca, err := LoadAppSecret(app)
	if err != nil {
		return NewAMReader(nil, err)
	}
	return NewAMReader(&AppKey{Secret: secret, CACert: ca}, nil)
}

// NewAMReader reads an AM with key; with a nil key anonymously, noKey saying why (nil: reads are
// anonymous and nothing is said).
func NewAMReader(key *AppKey, noKey error) *AMReader {
	return &AMReader{key: key, noKey: noKey}
}

// AMReader reads one application's AM: the status over HTTPS with the secret while it holds the key
// and the AM's HTTPS API answers, else over the plain tracking URL. One goroutine uses it (the
// command's, or Follow's poller); the event stream gets its client from it (eventsClient).
type AMReader struct {
	key   *AppKey
	noKey error
	// base is the AM URL whose status was read last; secure the pinned client of the HTTPS API that
	// status named (nil: reads of base are anonymous), kept so that polls reuse its connection.
	base   string
	secure *driverclient.Client
	why    error // why reads of base are anonymous
}

// AMView is the AM's status as read. Owner: read with the secret, the stderr tails are in it;
// otherwise Withheld says why not (nil when nothing needs saying).
type AMView struct {
	Status   *contract.Status
	Raw      json.RawMessage // the document as the AM sent it
	Owner    bool
	Withheld error
}

// Status reads the status of the AM at base (its tracking URL, AMURL). An error means the AM could
// not be read at all; a failed read over HTTPS falls back to the plain one and says so in Withheld.
func (r *AMReader) Status(ctx context.Context, base string) (AMView, error) {
	if r == nil {
		r = &AMReader{}
	}
	if r.secure != nil && r.base == base {
		if st, raw, err := r.secure.StatusDocument(ctx); err == nil {
			return AMView{Status: &st, Raw: raw, Owner: true}, nil
		}
		// Read the plain status again: it says where the HTTPS API is now.
	}
	st, raw, err := FetchAMStatus(ctx, base) // also names the HTTPS API
	if err != nil {
		return AMView{}, err
	}
	r.base, r.secure, r.why = base, nil, r.noKey
	view := AMView{Status: st, Raw: raw}
	if r.key != nil {
		c, err := r.pinned(st.SecureAPI)
		if err == nil {
			var full contract.Status
			if full, raw, err = c.StatusDocument(ctx); err == nil {
				r.secure = c
				return AMView{Status: &full, Raw: raw, Owner: true}, nil
			}
			err = fmt.Errorf("the AM's HTTPS API %s did not answer: %s", Sanitize(shorten(st.SecureAPI, 120)), Sanitize(shorten(err.Error(), 240)))
		}
		r.why = err
	}
	view.Withheld = r.why
	return view, nil
}

// pinned is the client of the HTTPS API at api that sends the secret, trusting the application's
// authority alone.
func (r *AMReader) pinned(api string) (*driverclient.Client, error) {
	if !strings.HasPrefix(api, "https://") {
		return nil, errors.New("the AM names no HTTPS API (an AM of an earlier release)")
	}
	c, err := driverclient.New(api, r.key.Secret)
	if err != nil {
		return nil, err
	}
	if err := c.Trust(r.key.CACert); err != nil {
		return nil, fmt.Errorf("the application's TLS authority kept on this machine: %w", err)
	}
	c.CallTimeout = amHTTP.Timeout
	return c, nil
}

// eventsClient is the client of base's event stream and whether it is the owner's. ok is false while
// the reader holds the key but has not read base's status yet: the stream waits for it rather than
// start without the tails.
func (r *AMReader) eventsClient(base string) (c *driverclient.Client, why error, owner, ok bool) {
	if r != nil && r.key != nil && r.base != base {
		return nil, nil, false, false
	}
	if r != nil && r.secure != nil {
		return r.secure, nil, true, true
	}
	c, err := driverclient.New(base+"api/v1/", "")
	if err != nil {
		return nil, nil, false, false
	}
	c.HTTP = plainStreamHTTP
	if r != nil {
		why = r.why
	}
	return c, why, false, true
}

// WithheldReason says in words why the stderr tails were not shown.
func WithheldReason(err error) string {
	var no *NoAppSecretError
	if errors.As(err, &no) {
		return fmt.Sprintf("this machine keeps no secret of %s (another user's application, or one submitted from another machine)", no.App)
	}
	return Sanitize(shorten(err.Error(), 400))
}

// withheldOnce says, the first time a failed worker's stderr tail is missing, that only the owner's
// secret shows it and why this command does not hold it.
type withheldOnce struct {
	mu   sync.Mutex
	said bool
}

func (o *withheldOnce) say(w io.Writer, stamp string, why error) {
	if why == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.said {
		return
	}
	o.said = true
	fmt.Fprintf(w, "%s     (the failed workers' last stderr lines need the application's secret: %s; yarn-am logs shows their whole stderr)\n", stamp, WithheldReason(why))
}

// PrintAMView prints the AM's status as PrintAMStatus does and, when a failed worker's stderr tail
// was withheld from this reader, why (once).
func PrintAMView(w io.Writer, v AMView) {
	PrintAMStatus(w, v.Status)
	if v.Owner || v.Withheld == nil {
		return
	}
	for _, ct := range v.Status.Containers {
		if ct.ExitStatus != nil && *ct.ExitStatus != 0 && workerFailed(ct.ExitClass) && ct.StderrTail == "" {
			fmt.Fprintf(w, "\nStderr tails: the failed workers' last stderr lines need the application's secret: %s; yarn-am logs %s shows their whole stderr\n",
				WithheldReason(v.Withheld), Sanitize(v.Status.App))
			return
		}
	}
}

// printStderrTails prints the failed workers' and the driver's last stderr lines, which the AM
// serves to the application's owner alone (the status read with the secret).
func printStderrTails(w io.Writer, st *contract.Status) {
	tail := func(head, text string) {
		fmt.Fprintf(w, "\n%s:\n", head)
		for _, l := range strings.Split(strings.TrimRight(Sanitize(text), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, ct := range st.Containers {
		if ct.StderrTail == "" {
			continue
		}
		head := "Last stderr lines of " + Cell(ct.ID)
		if ct.ExitStatus != nil {
			head += fmt.Sprintf(" (exit %d)", *ct.ExitStatus)
		}
		tail(head, ct.StderrTail)
	}
	if st.DriverStderrTail != "" {
		tail("Last stderr lines of the driver", st.DriverStderrTail)
	}
}

// OwnerReader reads app's AM with the key this session made when it submitted app (held in memory,
// so a failed SaveAppSecret does not cost submit the tails), else with the one kept on this machine.
func (s *Session) OwnerReader(app string) *AMReader {
	if s != nil && s.submittedKey != nil && s.submittedApp == app {
		return NewAMReader(s.submittedKey, nil)
	}
	return OwnerReader(app)
}
