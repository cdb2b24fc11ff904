// Package chromium drives headless Chromium for the web UI tests through the DevTools protocol on a
// pipe (--remote-debugging-pipe), so that a test waits on the page's own state, a DOM condition,
// instead of on time: a load that ends after a virtual-time budget took its picture whenever the
// budget ran out, and a request of a polling page left waiting under load stopped Chromium's virtual
// clock until an outer bound killed it (issue 41; TestBrowserWaitsForTheDOM). A deadline bounds every
// call, as a guard against a hang, never as the signal.
//
// Test support only (testkit): the integration tests of the AM's page and of Flink's dashboard import it.
package chromium

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Path finds Debian's chromium (testdata/ui/install-chromium.sh installs it), "" when there is none.
func Path() string {
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// Browser is one headless Chromium with one tab, driven over the DevTools protocol.
type Browser struct {
	cmd     *exec.Cmd
	in      *os.File // Chromium's fd 3: what it reads
	stderr  *lockedBuffer
	session string
	nextID  atomic.Int64

	closeOnce sync.Once

	mu      sync.Mutex
	pending map[int64]chan message
	events  map[string][]chan message // by method, one-shot waiters
	done    chan struct{}             // the reader ended: Chromium closed its pipe or exited
	readErr error
}

// message is one DevTools protocol message: a command's answer (ID) or an event (Method).
type message struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start runs headless Chromium (binary) with a fresh profile in profileDir, a window of width×height
// and the extra flags, and opens one tab on about:blank. Close ends it.
func Start(ctx context.Context, binary, profileDir string, width, height int, extra ...string) (*Browser, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + profileDir, fmt.Sprintf("--window-size=%d,%d", width, height),
		"--remote-debugging-pipe"}, extra...)
	b := &Browser{cmd: exec.Command(binary, append(args, "about:blank")...), in: inW, stderr: &lockedBuffer{},
		pending: map[int64]chan message{}, events: map[string][]chan message{}, done: make(chan struct{})}
	b.cmd.ExtraFiles = []*os.File{inR, outW} // fds 3 and 4, as --remote-debugging-pipe wants them
	b.cmd.Stderr = b.stderr
	err = b.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go b.read(outR)
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		b.Close()
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		b.Close()
		return nil, err
	}
	b.session = attached.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if err := b.call(ctx, b.session, m, nil, nil); err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// read dispatches Chromium's messages (NUL-terminated JSON on fd 4) until the pipe closes.
func (b *Browser) read(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var raw []byte
		if raw, err = br.ReadBytes(0); err != nil {
			break
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.pending[m.ID]; ok {
				delete(b.pending, m.ID)
				ch <- m
			}
		} else if m.Method != "" {
			for _, ch := range b.events[m.Method] {
				ch <- m
			}
			delete(b.events, m.Method)
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.readErr = err
	b.mu.Unlock()
	close(b.done)
}

// call sends one command (in session, "" for the browser) and decodes its result into out (nil: none).
func (b *Browser) call(ctx context.Context, session, method string, params any, out any) error {
	id := b.nextID.Add(1)
	ch := make(chan message, 1)
	b.mu.Lock()
	b.pending[id] = ch
	b.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if session != "" {
		req["sessionId"] = session
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("chromium: %s: %w%s", method, err, b.stderrTail())
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("chromium: %s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("chromium: %s: Chromium ended%s", method, b.stderrTail())
	case <-ctx.Done():
		return fmt.Errorf("chromium: %s: %w%s", method, ctx.Err(), b.stderrTail())
	}
}

// awaitEvent returns a channel that receives the next event method of the tab.
func (b *Browser) awaitEvent(method string) <-chan message {
	ch := make(chan message, 1)
	b.mu.Lock()
	b.events[method] = append(b.events[method], ch)
	b.mu.Unlock()
	return ch
}

// Navigate loads url in the tab and returns once its load event fired (Page.loadEventFired).
func (b *Browser) Navigate(ctx context.Context, url string) error {
	loaded := b.awaitEvent("Page.loadEventFired")
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, b.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("chromium: loading %s: %s", url, nav.ErrorText)
	}
	select {
	case <-loaded:
		return nil
	case <-b.done:
		return fmt.Errorf("chromium: loading %s: Chromium ended%s", url, b.stderrTail())
	case <-ctx.Done():
		return fmt.Errorf("chromium: loading %s: no load event: %w%s", url, ctx.Err(), b.stderrTail())
	}
}

// WaitFor returns once the JavaScript expression cond is true in the page: checked at once and again
// on every change of the DOM (a MutationObserver), so the page's own drawing is the signal. A cond
// that throws counts as false.
func (b *Browser) WaitFor(ctx context.Context, cond string) error {
	expr := `new Promise(function (resolve) {
  function ok() { try { return !!(` + cond + `); } catch (e) { return false; } }
  if (ok()) { resolve(true); return; }
  var mo = new MutationObserver(function () { if (ok()) { mo.disconnect(); resolve(true); } });
  mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})`
	var res struct {
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(ctx, b.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true}, &res); err != nil {
		dom, _ := b.DOM(context.Background())
		return fmt.Errorf("waiting for %s: %w; the page's text:\n%s", cond, err, cut(dom, 3000))
	}
	if res.Exception != nil {
		return fmt.Errorf("waiting for %s: %s", cond, res.Exception.Text)
	}
	return nil
}

// DOM is the page's document as HTML (what --dump-dom prints).
func (b *Browser) DOM(ctx context.Context) (string, error) {
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	err := b.call(ctx, b.session, "Runtime.evaluate", map[string]any{"expression": "document.documentElement.outerHTML", "returnByValue": true}, &res)
	return res.Result.Value, err
}

// Screenshot is the tab's viewport as PNG.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := b.call(ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}

// Stderr is what Chromium wrote on stderr so far (its log with --enable-logging=stderr); all of it
// once Close returned.
func (b *Browser) Stderr() string { return b.stderr.String() }

// Close ends Chromium (Browser.close, then a kill if it has not ended 10 s later) and waits for it
// and for its stderr (Stderr is then complete). A second Close does nothing.
func (b *Browser) Close() { b.closeOnce.Do(b.close) }

func (b *Browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	b.in.Close()
	exited := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-ctx.Done():
		_ = b.cmd.Process.Kill()
		<-exited
	}
}

func (b *Browser) stderrTail() string {
	s := strings.TrimSpace(b.stderr.String())
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return "; its stderr's end:\n" + s
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// lockedBuffer is Chromium's stderr, written by exec's copier and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 4<<20 { // a log past 4 MiB keeps its start only
		return len(p), nil
	}
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
