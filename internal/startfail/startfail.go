package startfail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// maxLine is how much of a program's first line is read: Linux reads at most 256 bytes of a #! line
// (BINPRM_BUF_SIZE), so nothing beyond it names the interpreter.
const maxLine = 256

// Error is a start failure explained: Path is the program as started, Reason what is wrong with it.
// It unwraps to the error of the start, so errors.Is(err, fs.ErrNotExist) still holds.
type Error struct {
	Path   string
	Reason string
	Err    error
}

func (e *Error) Error() string { return quote(e.Path) + ": " + e.Reason }

func (e *Error) Unwrap() error { return e.Err }

// Explain returns err (the error of starting the program at path) explained when the program is a
// file this node has and the failure is about its #! line or its mode: a missing interpreter (the
// kernel says ENOENT), a carriage return at the end of the #! line, no #! line at all (ENOEXEC), no
// execute permission (EACCES). Any other error is returned as it is (TestExplainSaysWhichPartIsMissing).
func Explain(path string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || (errno != syscall.ENOENT && errno != syscall.ENOEXEC && errno != syscall.EACCES) {
		return err
	}
	st, serr := os.Stat(path)
	if serr != nil || !st.Mode().IsRegular() {
		return err // the program itself is missing (or a directory): the kernel's words are right
	}
	if errno == syscall.EACCES {
		if st.Mode().Perm()&0o111 == 0 {
			return &Error{Path: path, Err: err, Reason: fmt.Sprintf("is not executable (its mode is %s): make it executable (chmod +x) or start it through its interpreter (sh %s)", st.Mode().Perm(), quote(path))}
		}
		return err
	}
	first, rerr := firstLine(path)
	if rerr != nil {
		return err
	}
	interp, ok := bytes.CutPrefix(first, []byte("#!"))
	if !ok {
		if errno == syscall.ENOEXEC {
			return &Error{Path: path, Err: err, Reason: "has no #! line and is not a program this node can run (exec format error): begin it with the interpreter's line, such as #!/bin/sh or #!/usr/bin/env python3"}
		}
		return err
	}
	line := strings.TrimLeft(string(interp), " \t")
	name, _, _ := strings.Cut(line, " ")
	name, _, _ = strings.Cut(name, "\t")
	if base, cr := strings.CutSuffix(name, "\r"); cr {
		// The kernel takes the \r as part of the interpreter's name.
		return &Error{Path: path, Err: err, Reason: fmt.Sprintf("its #! line ends in a carriage return (\\r): the file has Windows line ends, so the interpreter is taken to be %s; convert the file to Unix line ends (dos2unix, or sed -i 's/\\r$//')", quote(base+"\r"))}
	}
	if name == "" {
		return &Error{Path: path, Err: err, Reason: "its #! line names no interpreter"}
	}
	if _, ierr := os.Stat(name); errors.Is(ierr, fs.ErrNotExist) {
		return &Error{Path: path, Err: err, Reason: fmt.Sprintf("its #! line names %s, which does not exist on this node: install it there or change the #! line (#!/usr/bin/env finds an interpreter on PATH)", quote(name))}
	}
	if errno == syscall.ENOEXEC {
		return &Error{Path: path, Err: err, Reason: fmt.Sprintf("its #! line names %s, which is not a program this node can run (exec format error)", quote(name))}
	}
	return err
}

// firstLine reads the program's first line, at most maxLine bytes, without its "\n".
func firstLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxLine))
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return buf, nil
}

// quote shows a path or an interpreter's name as is when it is plain, Go-quoted (control characters as
// escapes) and cut to 200 bytes otherwise: the name comes from a file the user wrote.
func quote(s string) string {
	const max = 200
	plain := len(s) <= max && utf8.ValidString(s)
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ' ' || r == '"' || (r >= 0x80 && r <= 0x9f) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	if len(s) <= max {
		return strconv.Quote(s)
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:n]), len(s))
}
