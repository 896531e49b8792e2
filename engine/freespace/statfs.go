package freespace

import "syscall"

// statfsAvailable is f_bavail × f_bsize: the blocks an unprivileged process may still use.
func statfsAvailable(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
