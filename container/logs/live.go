package logs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// NodeManager web services (Hadoop 3.x), the live side of `yarn-am logs`:
//
//	GET /ws/v1/node/containers/<cid>/logs     the container's log files (name, size), JSON
//	GET /ws/v1/node/containerlogs/<cid>/<file>[?size=N]
//	                                          one file, wrapped as "Container: …\nLogType:…\n
//	                                          LogLength:<file length>\nLogContents:\n<bytes>End of
//	                                          LogType:…"; size=N: the first N bytes, size=-N: the last N
//	GET /ws/v1/node/apps/<app>                the app's containers on this node ("containerids")
//
// There is no byte-offset parameter: following a file asks for its last bytes and uses LogLength
// (the file's length when the NM read it) to place them (Follow).

// NM talks to NodeManagers' web services.
type NM struct {
	HTTP *http.Client
}

// NewNM returns a client with a per-request timeout and no proxy (NMs listen on cluster addresses).
func NewNM() *NM {
	return &NM{HTTP: &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 20 * time.Second}}
}

// LiveFile is a log file a NodeManager lists for a container.
type LiveFile struct {
	Name string
	Size int64
}

// StatusError is a NodeManager's answer other than 200.
type StatusError struct {
	URL    string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	msg := e.Body
	var re struct {
		RemoteException struct {
			Message string `json:"message"`
		} `json:"RemoteException"`
	}
	if json.Unmarshal([]byte(e.Body), &re) == nil && re.RemoteException.Message != "" {
		msg = re.RemoteException.Message
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if e.Status == http.StatusUnauthorized {
		return fmt.Sprintf("GET %s: HTTP 401: the NodeManager's web services want HTTP authentication (hadoop.http.authentication.type=kerberos, SPNEGO), which yarn-am logs does not speak yet; read a running application's logs with Hadoop's `yarn logs -applicationId`, or wait until it ends and its logs are aggregated", e.URL)
	}
	if strings.Contains(e.Body, "SecureIOUtils") {
		return fmt.Sprintf("GET %s: HTTP %d: the NodeManager cannot read container logs: on a Kerberized cluster it opens them through SecureIOUtils, which needs Hadoop's native library (libhadoop) on the NodeManager; the same stops Hadoop's own yarn logs", e.URL, e.Status)
	}
	if e.Status == http.StatusInternalServerError && strings.Contains(e.URL, "/containerlogs/") &&
		strings.Contains(e.Body, "org.glassfish.jersey.servlet.ServletContainer") {
		// Hadoop 3.5's web services (Jersey 2) answer an Error thrown while serving (SecureIOUtils'
		// failed class initialisation among them) with Jetty's bare error page, without the cause
		// 3.4 put in the body: say what it most likely is, and where the cause is
		// (TestSecureLogs on 3.5.0; docs/running.md#yarn-am-logs).
		return fmt.Sprintf("GET %s: HTTP 500: the NodeManager failed to serve the log without saying why (Hadoop 3.5 keeps the cause in its own log); on a Kerberized cluster the likely cause is that it opens container logs through SecureIOUtils, which needs Hadoop's native library (libhadoop) on the NodeManager; the same stops Hadoop's own yarn logs", e.URL)
	}
	return fmt.Sprintf("GET %s: HTTP %d: %s", e.URL, e.Status, msg)
}

func (n *NM) get(ctx context.Context, u string, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := n.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{URL: u, Status: resp.StatusCode, Body: string(bytes.TrimSpace(body))}
	}
	return body, nil
}

func nmURL(httpAddr string, parts ...string) string {
	u := "http://" + httpAddr + "/ws/v1/node"
	for _, p := range parts {
		u += "/" + url.PathEscape(p)
	}
	return u
}

// AppContainers lists the containers a NodeManager runs for app.
func (n *NM) AppContainers(ctx context.Context, httpAddr, app string) ([]string, error) {
	body, err := n.get(ctx, nmURL(httpAddr, "apps", app), "application/json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		App struct {
			ContainerIDs []string `json:"containerids"`
		} `json:"app"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%s: not the NM's app document: %w", nmURL(httpAddr, "apps", app), err)
	}
	return doc.App.ContainerIDs, nil
}

// Files lists a container's log files on its NodeManager.
func (n *NM) Files(ctx context.Context, httpAddr, container string) ([]LiveFile, error) {
	u := nmURL(httpAddr, "containers", container, "logs")
	body, err := n.get(ctx, u, "application/json")
	if err != nil {
		return nil, err
	}
	// Jersey renders a one-element list as an object, so both shapes are accepted.
	var one struct {
		Info struct {
			Files json.RawMessage `json:"containerLogInfo"`
		} `json:"containerLogsInfo"`
	}
	var many []struct {
		Files json.RawMessage `json:"containerLogInfo"`
		Type  string          `json:"logAggregationType"`
	}
	var raw json.RawMessage
	if err := json.Unmarshal(body, &one); err == nil && one.Info.Files != nil {
		raw = one.Info.Files
	} else if err := json.Unmarshal(body, &many); err == nil {
		for _, m := range many {
			if m.Type == "" || m.Type == "LOCAL" {
				raw = m.Files
			}
		}
	}
	if raw == nil {
		return nil, nil
	}
	type info struct {
		Name string `json:"fileName"`
		Size string `json:"fileSize"`
	}
	var infos []info
	if err := json.Unmarshal(raw, &infos); err != nil {
		var single info
		if err := json.Unmarshal(raw, &single); err != nil {
			return nil, fmt.Errorf("%s: unexpected log list: %w", u, err)
		}
		infos = []info{single}
	}
	var out []LiveFile
	for _, i := range infos {
		size, _ := strconv.ParseInt(i.Size, 10, 64)
		out = append(out, LiveFile{Name: i.Name, Size: size})
	}
	return out, nil
}

// Open streams one log file: size 0 = all of it, > 0 the first size bytes, < 0 the last -size
// bytes. It returns a reader of exactly those bytes and the file's length when the NM read it.
func (n *NM) Open(ctx context.Context, httpAddr, container, file string, size int64) (io.ReadCloser, int64, error) {
	u := nmURL(httpAddr, "containerlogs", container, file)
	if size != 0 {
		u += "?size=" + strconv.FormatInt(size, 10)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := n.stream().Do(req)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, 0, &StatusError{URL: u, Status: resp.StatusCode, Body: string(bytes.TrimSpace(body))}
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	total := int64(-1)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			resp.Body.Close()
			return nil, 0, fmt.Errorf("%s: no LogLength/LogContents header in the NM's answer", u)
		}
		if v, ok := strings.CutPrefix(line, "LogLength:"); ok {
			if total, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				resp.Body.Close()
				return nil, 0, fmt.Errorf("%s: LogLength %q: %w", u, strings.TrimSpace(v), err)
			}
		}
		if line == "LogContents:\n" && total >= 0 {
			break
		}
	}
	want := total
	switch {
	case size > 0 && size < total:
		want = size
	case size < 0 && -size < total:
		want = -size
	}
	return &exactBody{r: io.LimitReader(br, want), want: want, url: u, c: resp.Body}, total, nil
}

// exactBody is a log file's content inside the NM's answer; a short one is an error, not a silently
// shorter log.
type exactBody struct {
	r    io.Reader
	want int64
	got  int64
	url  string
	c    io.Closer
}

func (e *exactBody) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.got += int64(n)
	if err == io.EOF && e.got < e.want {
		return n, fmt.Errorf("%s: the NM sent %d bytes of content, LogLength says %d", e.url, e.got, e.want)
	}
	return n, err
}

func (e *exactBody) Close() error { return e.c.Close() }

// stream is the client for log bodies: no overall timeout (a big log takes its time; the context
// bounds it), the same transport.
func (n *NM) stream() *http.Client {
	c := *n.HTTP
	c.Timeout = 0
	return &c
}

// Fetch reads one log file into memory (see Open); for the bounded pieces --follow asks for.
func (n *NM) Fetch(ctx context.Context, httpAddr, container, file string, size int64) ([]byte, int64, error) {
	rc, total, err := n.Open(ctx, httpAddr, container, file, size)
	if err != nil {
		return nil, 0, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, 0, err
	}
	return b, total, nil
}

// Cursor follows one log file: what has been printed so far.
type Cursor struct {
	Off int64 // bytes of the file already printed
}

// Next fetches what the file gained past c.Off and advances. skipped > 0 says bytes were lost
// (the file grew by more than max since the last call); truncated says the file shrank (rotated),
// and the output restarts from its beginning.
func (n *NM) Next(ctx context.Context, c *Cursor, httpAddr, container, file string, max int64) (data []byte, skipped int64, truncated bool, err error) {
	ask := int64(64 << 10)
	for {
		b, total, err := n.Fetch(ctx, httpAddr, container, file, -ask)
		if err != nil {
			return nil, 0, false, err
		}
		if total < c.Off {
			c.Off = 0
			truncated = true
		}
		start := total - int64(len(b))
		if start <= c.Off {
			data = b[c.Off-start:]
			c.Off = total
			return data, 0, truncated, nil
		}
		if ask >= max {
			skipped = start - c.Off
			c.Off = total
			return b, skipped, truncated, nil
		}
		ask = min(max, (total-c.Off)*2)
	}
}
