package yarnrpc

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DIGEST-MD5 (RFC 2831), client side, as Hadoop uses it for delegation tokens, AM-RM tokens and NM
// tokens: username = base64(token identifier), password = base64(token password), protocol "" and
// server id "default" (digest-uri "/default"), realm "default". All three qualities of protection:
// "auth", and "auth-int"/"auth-conf" whose security layer is in digestmd5_layer.go.

// clientMaxBuf is the maxbuf we announce: the largest wrapped message we accept from the server.
// Hadoop's server wraps each response whole, so this bounds nothing in practice; it is the JDK's
// default.
const clientMaxBuf = 65536

const (
	qopAuth     = "auth"
	qopAuthInt  = "auth-int"
	qopAuthConf = "auth-conf"
)

// digestMD5Client is one DIGEST-MD5 authentication; not reusable.
type digestMD5Client struct {
	username, password string
	digestURI          string
	wantQOP            []string // acceptable QOPs, most preferred first
	ciphers            []string // acceptable auth-conf ciphers, most preferred first
	weakCiphers        bool     // des, rc4-56 and rc4-40 allowed (KeyWeakDigestCiphersAllowed)
	rand               io.Reader

	stage   int // 0: waiting for the challenge, 1: waiting for rspauth, 2: done
	params  digestParams
	chosen  string
	cipher  string // for auth-conf
	maxbuf  int    // the server's receive buffer: the largest wrapped message it takes
	ha1     []byte // binary H(A1), the root of the security layer's keys
	rspauth string
	layer   *digestLayer
}

// newDigestMD5Client prepares an authentication with a Hadoop token; weakCiphers allows the
// export-grade ciphers (see weakDigestCiphers).
func newDigestMD5Client(tok Token, protocol, serverID string, wantQOP []string, weakCiphers bool) *digestMD5Client {
	return &digestMD5Client{
		username:    base64.StdEncoding.EncodeToString(tok.Identifier),
		password:    base64.StdEncoding.EncodeToString(tok.Password),
		digestURI:   protocol + "/" + serverID,
		wantQOP:     wantQOP,
		ciphers:     digestCiphers,
		weakCiphers: weakCiphers,
		rand:        rand.Reader,
	}
}

// KeyWeakDigestCiphersAllowed lets DIGEST-MD5 auth-conf use the export-grade ciphers des, rc4-56
// and rc4-40 (keys of 56 bits or less, which can be brute-forced), refused by default.
const KeyWeakDigestCiphersAllowed = "yarn-am.sasl.digest-md5.weak-ciphers-allowed"

// weakDigestCiphers are refused unless KeyWeakDigestCiphersAllowed (TestDigestMD5WeakCiphers).
var weakDigestCiphers = []string{"des", "rc4-56", "rc4-40"}

func (d *digestMD5Client) name() string { return "DIGEST-MD5" }

// start returns no initial response: DIGEST-MD5 waits for the server's challenge.
func (d *digestMD5Client) start() ([]byte, error) { return nil, nil }

func (d *digestMD5Client) complete() bool { return d.stage == 2 }

func (d *digestMD5Client) qop() string { return d.chosen }

func (d *digestMD5Client) wrap(p []byte) ([]byte, error) {
	if d.layer == nil {
		return nil, fmt.Errorf("DIGEST-MD5: no security layer for QOP %q", d.chosen)
	}
	return d.layer.wrap(p)
}

func (d *digestMD5Client) unwrap(p []byte) ([]byte, error) {
	if d.layer == nil {
		return nil, fmt.Errorf("DIGEST-MD5: no security layer for QOP %q", d.chosen)
	}
	return d.layer.unwrap(p)
}

// maxWrap is the largest message to wrap at once: the server's maxbuf less what wrapping adds.
func (d *digestMD5Client) maxWrap() int { return d.maxbuf - digestLayerOverhead }

// step answers the server's challenge (first call) and checks the server's rspauth (second call).
func (d *digestMD5Client) step(challenge []byte) ([]byte, error) {
	switch d.stage {
	case 0:
		resp, err := d.respond(challenge)
		if err != nil {
			return nil, err
		}
		d.stage = 1
		return resp, nil
	case 1:
		dirs, err := parseDirectives(string(challenge))
		if err != nil {
			return nil, fmt.Errorf("DIGEST-MD5: server's final message: %w", err)
		}
		got := dirs.get("rspauth")
		if got == "" {
			return nil, fmt.Errorf("DIGEST-MD5: server's final message has no rspauth (got %q)", challenge)
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(d.rspauth)) != 1 {
			return nil, errors.New("DIGEST-MD5: server's rspauth does not match: the server does not know the token's password")
		}
		if d.chosen != qopAuth {
			l, err := newDigestLayer(d.ha1, d.chosen, d.cipher, true)
			if err != nil {
				return nil, err
			}
			d.layer = l
		}
		d.stage = 2
		return nil, nil
	default:
		return nil, errors.New("DIGEST-MD5: unexpected message after authentication completed")
	}
}

func (d *digestMD5Client) respond(challenge []byte) ([]byte, error) {
	dirs, err := parseDirectives(string(challenge))
	if err != nil {
		return nil, fmt.Errorf("DIGEST-MD5: server challenge: %w", err)
	}
	nonce := dirs.get("nonce")
	if nonce == "" {
		return nil, fmt.Errorf("DIGEST-MD5: server challenge has no nonce: %q", challenge)
	}
	if alg := dirs.get("algorithm"); alg != "md5-sess" {
		return nil, fmt.Errorf("DIGEST-MD5: server challenge has algorithm %q; only md5-sess exists", alg)
	}
	offered := []string{qopAuth}
	if q := dirs.get("qop"); q != "" {
		offered = splitList(q)
	}
	d.chosen = ""
	for _, w := range d.wantQOP {
		if contains(offered, w) {
			d.chosen = w
			break
		}
	}
	if d.chosen == "" {
		return nil, fmt.Errorf("DIGEST-MD5: no common quality of protection: the server offers %v, hadoop.rpc.protection allows %v",
			offered, d.wantQOP)
	}
	d.cipher = ""
	if d.chosen == qopAuthConf {
		offeredCiphers := splitList(dirs.get("cipher"))
		var weak []string
		for _, c := range d.ciphers {
			if !contains(offeredCiphers, c) {
				continue
			}
			if !d.weakCiphers && contains(weakDigestCiphers, c) {
				weak = append(weak, c)
				continue
			}
			d.cipher = c
			break
		}
		if d.cipher == "" && len(weak) > 0 {
			return nil, fmt.Errorf("DIGEST-MD5: for auth-conf (hadoop.rpc.protection=privacy) the server offers ciphers %q, of which "+
				"this client has only the weak %v (keys of 56 bits or less); set %s=true to accept them",
				dirs.get("cipher"), weak, KeyWeakDigestCiphersAllowed)
		}
		if d.cipher == "" {
			return nil, fmt.Errorf("DIGEST-MD5: no common cipher for auth-conf (hadoop.rpc.protection=privacy): the server offers %q, this client has %v",
				dirs.get("cipher"), d.ciphers)
		}
	}
	d.maxbuf = 65536 // RFC 2831's default when the server names none
	if mb := dirs.get("maxbuf"); mb != "" {
		n, err := strconv.Atoi(mb)
		if err != nil || n <= digestLayerOverhead || n > 1<<24-1 {
			return nil, fmt.Errorf("DIGEST-MD5: server challenge has maxbuf=%q; want a number from %d to 16777215", mb, digestLayerOverhead+1)
		}
		d.maxbuf = n
	}
	cb := make([]byte, 18)
	if _, err := io.ReadFull(d.rand, cb); err != nil {
		return nil, fmt.Errorf("DIGEST-MD5: cnonce: %w", err)
	}
	realm := ""
	if rs := dirs.all("realm"); len(rs) > 0 {
		realm = rs[0]
	}
	d.params = digestParams{
		username:  d.username,
		realm:     realm,
		password:  d.password,
		nonce:     nonce,
		cnonce:    base64.StdEncoding.EncodeToString(cb),
		nc:        "00000001",
		qop:       d.chosen,
		digestURI: d.digestURI,
	}
	response := d.params.response(false)
	d.rspauth = d.params.response(true)
	d.ha1 = d.params.ha1()

	var b strings.Builder
	if strings.EqualFold(dirs.get("charset"), "utf-8") {
		b.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&b, "username=%s,realm=%s,nonce=%s,nc=%s,cnonce=%s,digest-uri=%s,maxbuf=%d,response=%s,qop=%s",
		quote(d.params.username), quote(realm), quote(nonce), d.params.nc, quote(d.params.cnonce),
		quote(d.digestURI), clientMaxBuf, response, d.chosen)
	if d.cipher != "" {
		b.WriteString(",cipher=" + quote(d.cipher))
	}
	return []byte(b.String()), nil
}

// digestParams are the inputs of the RFC 2831 response-value computation.
type digestParams struct {
	username, realm, password string
	nonce, cnonce, nc, qop    string
	digestURI, authzid        string
}

// ha1 is H(A1), the binary MD5 of A1, from which the security layer's keys derive.
func (p digestParams) ha1() []byte {
	inner := md5.Sum([]byte(p.username + ":" + p.realm + ":" + p.password))
	a1 := string(inner[:]) + ":" + p.nonce + ":" + p.cnonce
	if p.authzid != "" {
		a1 += ":" + p.authzid
	}
	h := md5.Sum([]byte(a1))
	return h[:]
}

// response computes the "response" directive (rspauth=false) or the server's "rspauth" value
// (rspauth=true), RFC 2831 §2.1.2.1.
func (p digestParams) response(rspauth bool) string {
	ha1 := hex.EncodeToString(p.ha1())
	a2 := ":" + p.digestURI
	if !rspauth {
		a2 = "AUTHENTICATE" + a2
	}
	if p.qop == qopAuthInt || p.qop == qopAuthConf {
		a2 += ":00000000000000000000000000000000"
	}
	return hexMD5(ha1 + ":" + p.nonce + ":" + p.nc + ":" + p.cnonce + ":" + p.qop + ":" + hexMD5(a2))
}

func hexMD5(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// directives are the key=value pairs of a DIGEST-MD5 message; keys are lower-cased and may repeat
// (realm).
type directives map[string][]string

func (d directives) get(k string) string {
	if v := d[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (d directives) all(k string) []string { return d[k] }

// maxDirectivesLen bounds what we parse: RFC 2831 limits challenges to 2048 bytes and responses to
// 4096.
const maxDirectivesLen = 4096

// parseDirectives parses `k=v, k="quoted \" value", ...`.
func parseDirectives(s string) (directives, error) {
	if len(s) > maxDirectivesLen {
		return nil, fmt.Errorf("message of %d bytes exceeds the %d bytes DIGEST-MD5 allows", len(s), maxDirectivesLen)
	}
	out := directives{}
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		skip()
		if i >= len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			return nil, fmt.Errorf("directive %q has no value", strings.TrimSpace(s[start:i]))
		}
		key := strings.ToLower(strings.TrimSpace(s[start:i]))
		i++ // '='
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var val strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\\' && i < len(s) {
					val.WriteByte(s[i])
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("directive %q: unterminated quoted value", key)
			}
		} else {
			start := i
			for i < len(s) && s[i] != ',' {
				i++
			}
			val.WriteString(strings.TrimSpace(s[start:i]))
		}
		out[key] = append(out[key], val.String())
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
