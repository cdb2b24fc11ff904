package flink

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxProcNetTCP bounds the read of /proc/<pid>/net/tcp{,6}: about 150 bytes a socket, so 64 MiB is
// hundreds of thousands of sockets.
const maxProcNetTCP = 64 << 20

// maxFDs bounds how many of the JVM's file descriptors are looked at.
const maxFDs = 1 << 16

// listeningPorts are the TCP ports process pid listens on: its own sockets (/proc/<pid>/fd, links
// to socket:[inode]) that are in the LISTEN state in its network namespace's /proc/<pid>/net/tcp and
// tcp6. Exact: no other process's socket has the inode, whatever port it holds.
func listeningPorts(pid int) ([]int, error) {
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	d, err := os.Open(fdDir)
	if err != nil {
		return nil, fmt.Errorf("the JVM's sockets: %w", err)
	}
	names, err := d.Readdirnames(maxFDs)
	d.Close()
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("the JVM's sockets: %w", err)
	}
	inodes := map[string]bool{}
	for _, n := range names {
		link, err := os.Readlink(filepath.Join(fdDir, n))
		if err != nil {
			continue // closed since the listing
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var ports []int
	for _, f := range []string{"tcp", "tcp6"} {
		p, err := listeningIn(filepath.Join("/proc", strconv.Itoa(pid), "net", f), inodes)
		if err != nil {
			return nil, err
		}
		ports = append(ports, p...)
	}
	slices.Sort(ports)
	return slices.Compact(ports), nil
}

// listeningIn reads one /proc/net/tcp table: "sl local_address rem_address st ... inode", the
// local port in hex after the address's colon, LISTEN is state 0A, the inode the tenth field.
func listeningIn(path string, inodes map[string]bool) ([]int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil // no IPv6 in this kernel
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxProcNetTCP))
	var ports []int
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && p > 0 {
			ports = append(ports, int(p))
		}
	}
	return ports, sc.Err()
}
