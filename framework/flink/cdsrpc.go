package flink

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/yarn-am/yarn-am/framework/flink/flinkdist"
	"github.com/yarn-am/yarn-am/internal/classfile"
)

// Flink's RPC system in the archive (docs/flink.md#class-data-sharing). Flink unpacks the
// flink-rpc-akka jar that flink-dist carries at each start and loads Pekko, Scala and its RPC service
// from it with a class loader of its own: about 2,000 classes of a JobManager's start, which a class
// list (-XX:DumpLoadedClassList) does not name on JDK 17. The first JobManager logs the classes it
// loads and where from (flinkdist.CDS.LoadLog); the driver takes the names of those that came from
// that jar, reads each one's superclass and interfaces from the jar as flink-dist carries it, and
// adds them to the list as classes of a jar for a class loader of the application's own ("id:",
// "super:", "interfaces:", "source:"): the JVM that dumps loads them from that jar, and a later JVM
// maps them when Flink's loader defines a class of the same name, size and CRC-32, the home's own
// bytes. What the log says is only names: the bytes are the home's.

// cdsLoadLogName is the JobManager's class-loading log in the driver's working directory.
const cdsLoadLogName = ".yarn-am-cds-loaded.log"

// rpcJarEntry is the jar of Flink's RPC system inside flink-dist.
const rpcJarEntry = "flink-rpc-akka.jar"

// maxRPCJarBytes bounds the RPC jar unpacked from flink-dist (21 MiB in 1.20.5, 24 MiB in 2.3.0).
const maxRPCJarBytes = 256 << 20

// maxClassFileBytes bounds one class file read from the RPC jar.
const maxClassFileBytes = 16 << 20

// maxLoadLogBytes bounds the class-loading log read (a JobManager's is about 1.5 MiB).
const maxLoadLogBytes = 64 << 20

// rpcClassNames returns the classes (a/b/C) that the log (-Xlog:class+load without decorations)
// says came from an unpacked flink-rpc-akka jar, each once, in the order loaded.
func rpcClassNames(log []byte) []string {
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(log), "\n") {
		name, source, ok := strings.Cut(strings.TrimSpace(line), " source: ")
		if !ok || strings.ContainsAny(name, " \t/") || name == "" || len(name) > 1024 {
			continue
		}
		base := filepath.Base(strings.TrimPrefix(source, "file:"))
		if !strings.HasPrefix(base, "flink-rpc-akka") || !strings.HasSuffix(base, ".jar") {
			continue
		}
		name = strings.ReplaceAll(name, ".", "/")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return names
}

// unpackRPCJar writes the flink-rpc-akka jar of the home's flink-dist to dst.
func unpackRPCJar(home *flinkdist.Home, dst string) error {
	var dist string
	for _, j := range home.LibJars {
		if strings.HasPrefix(filepath.Base(j), "flink-dist") {
			dist = j
		}
	}
	if dist == "" {
		return fmt.Errorf("the home %s has no flink-dist jar in lib/", home.Dir)
	}
	z, err := zip.OpenReader(dist)
	if err != nil {
		return err
	}
	defer z.Close()
	for _, f := range z.File {
		if f.Name != rpcJarEntry {
			continue
		}
		if f.UncompressedSize64 > maxRPCJarBytes {
			return fmt.Errorf("%s in %s is larger than %d bytes", rpcJarEntry, dist, maxRPCJarBytes)
		}
		r, err := f.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		w, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		n, err := io.Copy(w, io.LimitReader(r, maxRPCJarBytes+1))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err == nil && n > maxRPCJarBytes {
			err = fmt.Errorf("%s in %s is larger than %d bytes", rpcJarEntry, dist, maxRPCJarBytes)
		}
		return err
	}
	return fmt.Errorf("%s has no %s", dist, rpcJarEntry)
}

// rpcClass is a class of the RPC jar: its superclass and interfaces.
type rpcClass struct {
	super      string
	interfaces []string
}

// readRPCClasses reads the supertypes of each of names from the jar at jar (classfile.Parse); a
// name the jar does not hold, holds under another name or not as a class file, is left out.
func readRPCClasses(jar string, names []string) (map[string]rpcClass, error) {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	files := make(map[string]*zip.File, len(z.File))
	for _, f := range z.File {
		files[f.Name] = f
	}
	out := make(map[string]rpcClass, len(names))
	for _, name := range names {
		f := files[name+".class"]
		if f == nil || f.UncompressedSize64 > maxClassFileBytes {
			continue
		}
		r, err := f.Open()
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(r, maxClassFileBytes))
		r.Close()
		if err != nil {
			continue
		}
		cf, err := classfile.Parse(b)
		if err != nil || cf.Name != name || cf.Super == "" || slices.Contains(cf.Interfaces, "") {
			continue
		}
		out[name] = rpcClass{super: cf.Super, interfaces: cf.Interfaces}
	}
	return out, nil
}

// withRPCClasses returns the class list names (cdsClassNames' lines) with an id on each class's
// line, followed by the RPC jar's classes rpc (of the jar at jar) as classes for a loader of the
// application's own, each after its superclass and interfaces; a class that the list does not name
// and the RPC jar does not hold (one Flink's loader took from the class path) is named before them.
// It returns the list and how many RPC classes it holds. A class whose supertypes cannot all be
// placed is left out.
func withRPCClasses(names []byte, rpc map[string]rpcClass, order []string, jar string) ([]byte, int) {
	var b strings.Builder
	ids := map[string]int{}
	next := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(names), "\n"), "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "@") {
			b.WriteString(line + "\n")
			continue
		}
		if _, dup := ids[line]; dup {
			continue
		}
		ids[line] = next
		b.WriteString(line + " id: " + strconv.Itoa(next) + "\n")
		next++
	}
	builtin := func(name string) int {
		if id, ok := ids[name]; ok {
			return id
		}
		ids[name] = next
		b.WriteString(name + " id: " + strconv.Itoa(next) + "\n")
		next++
		return ids[name]
	}
	var tail strings.Builder
	unreg := map[string]int{}
	failed := map[string]bool{}
	var place func(name string, depth int) (int, bool)
	place = func(name string, depth int) (int, bool) {
		if id, ok := unreg[name]; ok {
			return id, true
		}
		c, ok := rpc[name]
		if failed[name] || !ok || depth > 64 {
			return 0, false
		}
		failed[name] = true // until placed: a cycle fails
		ref := func(dep string) (int, bool) {
			if _, ours := rpc[dep]; ours {
				return place(dep, depth+1)
			}
			return builtin(dep), true
		}
		sup, ok := ref(c.super)
		if !ok {
			return 0, false
		}
		ifs := make([]string, 0, len(c.interfaces))
		for _, i := range c.interfaces {
			id, ok := ref(i)
			if !ok {
				return 0, false
			}
			ifs = append(ifs, strconv.Itoa(id))
		}
		delete(failed, name)
		id := next
		next++
		unreg[name] = id
		tail.WriteString(name + " id: " + strconv.Itoa(id) + " super: " + strconv.Itoa(sup))
		if len(ifs) > 0 {
			tail.WriteString(" interfaces: " + strings.Join(ifs, " "))
		}
		tail.WriteString(" source: " + jar + "\n")
		return id, true
	}
	for _, name := range order {
		place(name, 0)
	}
	b.WriteString(tail.String())
	return []byte(b.String()), len(unreg)
}
