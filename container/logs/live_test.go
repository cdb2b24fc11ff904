package logs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeNM answers like a Hadoop 3.x NodeManager's web services (the shapes were taken from the mini
// cluster's NodeManagers: see live.go) for one container whose stdout the test grows.
type fakeNM struct {
	mu      sync.Mutex
	content string
	asked   []string
}

func (f *fakeNM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, r.URL.RequestURI())
	const c = "container_1_0001_01_000002"
	switch r.URL.Path {
	case "/ws/v1/node/apps/application_1_0001":
		fmt.Fprintf(w, `{"app":{"id":"application_1_0001","state":"RUNNING","user":"u","containerids":["%s"]}}`, c)
	case "/ws/v1/node/containers/" + c + "/logs":
		fmt.Fprintf(w, `{"containerLogsInfo":{"containerLogInfo":[{"fileName":"stdout","fileSize":"%d","lastModifiedTime":"x"},{"fileName":"stderr","fileSize":"0","lastModifiedTime":"x"}],"logAggregationType":"LOCAL","containerId":"%s","nodeId":"n:1"}}`, len(f.content), c)
	case "/ws/v1/node/containerlogs/" + c + "/stdout":
		body := f.content
		if s := r.URL.Query().Get("size"); s != "" {
			n, _ := strconv.Atoi(s)
			if n >= 0 && n < len(body) {
				body = body[:n]
			} else if n < 0 && -n < len(body) {
				body = body[len(body)+n:]
			}
		}
		fmt.Fprintf(w, "Container: %s on n:1\nLogAggregationType: LOCAL\n====\nLogType:stdout\nLogLastModifiedTime:x\nLogLength:%d\nLogContents:\n%sEnd of LogType:stdout.This log file belongs to a running container (%s) and so may not be complete.\n****\n\n", c, len(f.content), body, c)
	default:
		w.WriteHeader(404)
		fmt.Fprint(w, `{"RemoteException":{"exception":"NotFoundException","message":"Cannot find this log on the local disk.","javaClassName":"x"}}`)
	}
}

func (f *fakeNM) set(s string) { f.mu.Lock(); f.content = s; f.mu.Unlock() }

func TestNMFilesFetchAndFollow(t *testing.T) {
	f := &fakeNM{content: "first\n"}
	srv := httptest.NewServer(f)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	nm := NewNM()
	ctx := context.Background()
	const c = "container_1_0001_01_000002"

	ids, err := nm.AppContainers(ctx, addr, "application_1_0001")
	if err != nil || len(ids) != 1 || ids[0] != c {
		t.Fatalf("AppContainers = %v, %v", ids, err)
	}
	files, err := nm.Files(ctx, addr, c)
	if err != nil || len(files) != 2 || files[0] != (LiveFile{"stdout", 6}) {
		t.Fatalf("Files = %v, %v", files, err)
	}
	b, total, err := nm.Fetch(ctx, addr, c, "stdout", 0)
	if err != nil || string(b) != "first\n" || total != 6 {
		t.Fatalf("Fetch = %q %d %v", b, total, err)
	}
	b, total, err = nm.Fetch(ctx, addr, c, "stdout", -3)
	if err != nil || string(b) != "st\n" || total != 6 {
		t.Fatalf("Fetch last 3 = %q %d %v", b, total, err)
	}

	cur := &Cursor{Off: 6}
	f.set("first\nsecond\n")
	data, skipped, trunc, err := nm.Next(ctx, cur, addr, c, "stdout", 1<<20)
	if err != nil || string(data) != "second\n" || skipped != 0 || trunc || cur.Off != 13 {
		t.Fatalf("Next = %q %d %v %v, off %d", data, skipped, trunc, err, cur.Off)
	}
	// Nothing new: nothing printed.
	data, _, _, err = nm.Next(ctx, cur, addr, c, "stdout", 1<<20)
	if err != nil || len(data) != 0 {
		t.Fatalf("Next without growth = %q, %v", data, err)
	}
	// More growth than the first ask (64 KiB): asked again for enough, nothing lost.
	big := strings.Repeat("x", 200<<10) + "\n"
	f.set("first\nsecond\n" + big)
	data, skipped, _, err = nm.Next(ctx, cur, addr, c, "stdout", 1<<20)
	if err != nil || string(data) != big || skipped != 0 {
		t.Fatalf("Next after 200 KiB: %d bytes, skipped %d, %v", len(data), skipped, err)
	}
	// Beyond max: the skip is said, the rest printed.
	f.set("first\nsecond\n" + big + strings.Repeat("y", 300<<10))
	data, skipped, _, err = nm.Next(ctx, cur, addr, c, "stdout", 100<<10)
	if err != nil || len(data) != 100<<10 || skipped != 200<<10 {
		t.Fatalf("Next beyond max: %d bytes, skipped %d, %v", len(data), skipped, err)
	}
	// A truncated (rotated) file starts again from its beginning.
	f.set("new\n")
	data, _, trunc, err = nm.Next(ctx, cur, addr, c, "stdout", 1<<20)
	if err != nil || string(data) != "new\n" || !trunc || cur.Off != 4 {
		t.Fatalf("Next after truncation = %q %v %v off %d", data, trunc, err, cur.Off)
	}

	_, _, err = nm.Fetch(ctx, addr, c, "nope", 0)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 || !strings.Contains(err.Error(), "Cannot find this log on the local disk.") {
		t.Fatalf("missing file: %v", err)
	}
}

// A NodeManager behind SPNEGO: the error says so and what to do instead, not a bare 401.
func TestNMWantsSPNEGO(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Negotiate")
		w.WriteHeader(401)
	}))
	defer srv.Close()
	_, err := NewNM().Files(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "c")
	if err == nil || !strings.Contains(err.Error(), "SPNEGO") || !strings.Contains(err.Error(), "yarn logs -applicationId") {
		t.Fatalf("err = %v", err)
	}
}

// TestNMBareError500OnContainerLog: a Hadoop 3.5 NodeManager (Jersey 2) answers an Error thrown while
// serving a container log with Jetty's bare error page (the body below is what the Kerberized 3.5.0
// mini cluster sent when SecureIOUtils could not initialise); the message names the likely cause.
// The same page for another resource stays as it came.
func TestNMBareError500OnContainerLog(t *testing.T) {
	page := "HTTP ERROR 500 Request failed.\nURI: %s\nSTATUS: 500\nMESSAGE: Request failed.\nSERVLET: org.glassfish.jersey.servlet.ServletContainer-66978c15"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		fmt.Fprintf(w, page, r.URL.Path)
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, _, err := NewNM().Fetch(context.Background(), addr, "container_1_0001_01_000002", "stdout", -1)
	if err == nil || !strings.Contains(err.Error(), "SecureIOUtils, which needs Hadoop's native library") ||
		!strings.Contains(err.Error(), "without saying why") {
		t.Fatalf("containerlogs: err = %v", err)
	}
	_, err = NewNM().Files(context.Background(), addr, "container_1_0001_01_000002")
	if err == nil || strings.Contains(err.Error(), "SecureIOUtils") || !strings.Contains(err.Error(), "HTTP 500: HTTP ERROR 500 Request failed.") {
		t.Fatalf("container log list: err = %v", err)
	}
}

// TestNMFilesListShapes: Jersey renders the log list as an object or as an array of per-type
// entries (LOCAL and AGGREGATED); a single file may come as an object instead of a list.
func TestNMFilesListShapes(t *testing.T) {
	for name, body := range map[string]string{
		"array":       `[{"containerLogInfo":[{"fileName":"stdout","fileSize":"5"}],"logAggregationType":"LOCAL"},{"containerLogInfo":[{"fileName":"old","fileSize":"1"}],"logAggregationType":"AGGREGATED"}]`,
		"single file": `{"containerLogsInfo":{"containerLogInfo":{"fileName":"stdout","fileSize":"5"},"logAggregationType":"LOCAL"}}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		files, err := NewNM().Files(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "c")
		srv.Close()
		if err != nil || len(files) != 1 || files[0] != (LiveFile{"stdout", 5}) {
			t.Errorf("%s: %v, %v", name, files, err)
		}
	}
}

// An answer cut short (the NM died mid-body) is an error, never a silently shorter log.
func TestNMShortBodyIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "Container: c on n:1\nLogType:stdout\nLogLastModifiedTime:x\nLogLength:100\nLogContents:\nhello")
	}))
	defer srv.Close()
	_, _, err := NewNM().Fetch(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "c", "stdout", 0)
	if err == nil || !strings.Contains(err.Error(), "sent 5 bytes of content, LogLength says 100") {
		t.Fatalf("err = %v", err)
	}
}
