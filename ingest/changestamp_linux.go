package ingest

import (
	"fmt"
	"os"
	"syscall"
)

// changeStamp is what no one can set by hand of a file: its inode and
// the time of its last change of content or metadata (ctime). A copy
// that keeps the size and the modification time (cp -p, rsync -t, tar,
// touch -r) still changes both, so the memory of a checked lake does not
// take it for the file that was checked.
func changeStamp(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %d.%09d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
}
