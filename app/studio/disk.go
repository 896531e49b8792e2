package studio

import (
	"fmt"
	"syscall"
)

// The hub's disk. JetStream turns itself off when its disk fills (a write that fails for want of
// space), which wedges the studio in silence. So the hub takes a share of the data folder's free
// space at start (HubConfig.MaxStore, else three quarters of it) as JetStream's store limit, and
// caps the stream and the two object stores within it: past a cap a write is refused at once
// ("maximum bytes exceeded"), the object store gives a failed put's chunks back, and the image
// fails with a message that names the hub's disk.

// DiskShare is the data folder's disk as the hub found it at start.
type DiskShare struct {
	Dir   string // the data folder
	Free  uint64 // its disk's free space at start, bytes
	Store int64  // the bytes the hub may fill (JetStream's store limit)
}

// minStore is the least share of a disk the hub starts with.
const minStore = 1 << 20

// shareOfDisk reads the free space of dir's disk and takes the hub's share.
func shareOfDisk(dir string, maxStore int64) (DiskShare, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return DiskShare{}, fmt.Errorf("the hub's data folder %s: reading its disk's free space: %w", dir, err)
	}
	d := DiskShare{Dir: dir, Free: uint64(st.Bavail) * uint64(st.Bsize)}
	d.Store = int64(d.Free / 4 * 3)
	if maxStore > 0 && maxStore < d.Store {
		d.Store = maxStore
	}
	if d.Store < minStore {
		return d, fmt.Errorf("the hub's data folder %s is on a disk with %s free (the hub takes %s of it): the hub needs at least %s; free space there or give --data on another disk",
			dir, sizeText(int64(d.Free)), sizeText(d.Store), sizeText(minStore))
	}
	return d, nil
}

// storeCaps are the byte limits of the hub's streams within its share.
type storeCaps struct{ jobs, inputs, results int64 }

func (d DiskShare) caps() storeCaps {
	jobs := min(max(d.Store/16, 64<<10), 64<<20)
	rest := d.Store - jobs
	return storeCaps{jobs: jobs, inputs: rest * 3 / 8, results: rest / 2} // an eighth spare
}

// sizeText is a byte count for people.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// String is the disk share for the hub's first lines and the status.
func (d DiskShare) String() string {
	c := d.caps()
	return fmt.Sprintf("%s free on its disk at start; the hub uses at most %s (results %s, inputs %s)",
		sizeText(int64(d.Free)), sizeText(d.Store), sizeText(c.results), sizeText(c.inputs))
}
