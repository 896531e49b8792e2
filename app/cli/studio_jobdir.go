package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A studio job's folder: os.TempDir()/easel-studio-job-PID-RANDOM, removed when the job ends. A
// worker killed with kill -9 cannot remove its folder (the job's condition images, masks and
// LoRAs), so a worker starting up removes the folders of processes that are gone.

const studioJobDirPrefix = "easel-studio-job-"

// newStudioJobDir makes a job's folder, named by this process.
func newStudioJobDir() (string, error) {
	dir, err := os.MkdirTemp("", studioJobDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("making the job's folder: %w", err)
	}
	return dir, nil
}

// removeLeftoverJobDirs removes the job folders of worker processes that no longer run; it
// returns how many it removed.
func removeLeftoverJobDirs() int {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), studioJobDirPrefix+"*"))
	removed := 0
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), studioJobDirPrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // that worker still runs
		}
		if os.RemoveAll(m) == nil {
			removed++
		}
	}
	return removed
}

// scrubJobDir takes the job folder's path out of an error: a failure goes back to the client,
// and nothing of this Mac's file system goes with it.
func scrubJobDir(err error, dir string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if !strings.Contains(msg, dir) {
		return err
	}
	return errors.New(strings.ReplaceAll(msg, dir+string(filepath.Separator), ""))
}
