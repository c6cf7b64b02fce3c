package sample

import (
	"io"
	"os"
)

// CopyFile copies the file at from to a new file at to, which must not
// exist: a test's or a benchmark's own copy of a sample warehouse built
// once. io.Copy between two files copies inside the kernel where it can
// (copy_file_range), so no buffer of the file's size is filled on the way.
func CopyFile(to, from string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		os.Remove(to)
		return err
	}
	return dst.Close()
}
