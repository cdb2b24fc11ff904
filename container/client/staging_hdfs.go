package client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	hdfs "github.com/colinmarc/hdfs/v2"
	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/yarn-am/yarn-am/internal/hdfsfile"
	"github.com/yarn-am/yarn-am/yarnrpc"
)

// uploadDeadline bounds the writing of one staged file.
const uploadDeadline = 10 * time.Minute

// HDFS is the FileSystem of a real cluster, through colinmarc/hdfs.
type HDFS struct {
	Client *hdfs.Client
	// DefaultFS is fs.defaultFS without a trailing slash (hdfs://host:port), the prefix of staged URLs.
	DefaultFS string
}

// DialHDFS connects to the NameNode(s) of fs.defaultFS in conf as user (SIMPLE authentication; a
// Kerberized cluster needs DialHDFSKerberos), by hdfsfile.Dial.
func DialHDFS(conf *yarnrpc.Config, user string) (*HDFS, error) { return dialHDFS(conf, user, nil) }

func dialHDFS(conf *yarnrpc.Config, user string, login *yarnrpc.Kerberos) (*HDFS, error) {
	def, _ := conf.Get("fs.defaultFS")
	if def == "" {
		def, _ = conf.Get("fs.default.name")
	}
	if !strings.HasPrefix(def, "hdfs://") {
		return nil, fmt.Errorf("fs.defaultFS = %q: staging needs an hdfs:// default filesystem; set fs.defaultFS in core-site.xml of HADOOP_CONF_DIR", def)
	}
	hc := hadoopconf.HadoopConf{}
	for _, k := range conf.Keys() {
		if v, ok := conf.Get(k); ok {
			hc[k] = v
		}
	}
	opts := hdfs.ClientOptionsFromConf(hc)
	if len(opts.Addresses) == 0 {
		return nil, fmt.Errorf("fs.defaultFS = %q: no NameNode address found (for an HA nameservice set dfs.namenode.rpc-address.<ns>.<nn>)", def)
	}
	if opts.KerberosClient != nil {
		if login == nil {
			return nil, errors.New("hadoop.security.authentication = kerberos: staging needs a Kerberos login; run `kinit <principal>` or pass --principal and --keytab")
		}
		if err := kerberosOptions(&opts, conf, login); err != nil {
			return nil, err
		}
	} else {
		opts.User = user
	}
	c, err := hdfsfile.Dial(opts, 20*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to HDFS %s: %w", def, err)
	}
	return &HDFS{Client: c, DefaultFS: strings.TrimSuffix(def, "/")}, nil
}

// Close closes the connection.
func (h *HDFS) Close() error { return h.Client.Close() }

// MkdirAll creates dir and its parents.
func (h *HDFS) MkdirAll(dir string, perm os.FileMode) error { return h.Client.MkdirAll(dir, perm) }

// Create creates a new file with the given permissions.
func (h *HDFS) Create(name string, perm os.FileMode) (io.WriteCloser, error) {
	w, err := h.Client.Create(name)
	if err != nil {
		return nil, err
	}
	// A stuck DataNode pipeline must not hang submit forever.
	if err := w.SetDeadline(time.Now().Add(uploadDeadline)); err != nil {
		w.Close()
		return nil, err
	}
	return &chmodOnClose{w: w, c: h.Client, name: name, perm: perm}, nil
}

// Stat returns the file's size, permissions and modification time.
func (h *HDFS) Stat(name string) (os.FileInfo, error) { return h.Client.Stat(name) }

// Open opens a file for reading, bounded like an upload: a stuck DataNode must not hang submit.
func (h *HDFS) Open(name string) (io.ReadCloser, error) {
	r, err := h.Client.Open(name)
	if err != nil {
		return nil, err
	}
	if err := r.SetDeadline(time.Now().Add(uploadDeadline)); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Rename moves a file. colinmarc/hdfs replaces an existing target; the cache checks first
// (stageCached).
func (h *HDFS) Rename(oldpath, newpath string) error { return h.Client.Rename(oldpath, newpath) }

// RemoveAll deletes name recursively.
func (h *HDFS) RemoveAll(name string) error { return h.Client.RemoveAll(name) }

// chmodOnClose sets the permissions once the file is complete (colinmarc/hdfs creates files 0644).
type chmodOnClose struct {
	w    *hdfs.FileWriter
	c    *hdfs.Client
	name string
	perm os.FileMode
}

func (c *chmodOnClose) Write(p []byte) (int, error) { return c.w.Write(p) }

func (c *chmodOnClose) Close() error {
	if err := hdfsfile.Close(c.w); err != nil {
		return err
	}
	if c.perm != 0o644 {
		return c.c.Chmod(c.name, c.perm)
	}
	return nil
}
