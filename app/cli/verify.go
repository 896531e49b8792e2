package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"easel/engine/cmf"
)

func init() {
	register(&Command{
		Name:    "verify",
		Usage:   "FILE.cmf",
		Summary: "check a model file's bounds, sizes and hashes",
		Run:     runVerify,
	})
}

// runVerify opens the file (structure), then hashes everything it records. Exit 0 only for a
// sound file; 1 with the reason otherwise.
func runVerify(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || len(args[0]) > 0 && args[0][0] == '-' {
		fmt.Fprintln(stderr, "usage: easel verify FILE.cmf")
		return ExitUsage
	}
	path := args[0]
	start := time.Now()
	f, err := cmf.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "easel verify: %v\n", err)
		return ExitFailure
	}
	defer f.Close()
	progress := progressLine(stderr, path)
	err = f.Verify(progress)
	if progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		fmt.Fprintf(stderr, "easel verify: %v\n", err)
		return ExitFailure
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "%s: sound. %d tensors, %s; structure, sizes and every recorded hash check out (%.1f s, %.0f MB/s)\n",
		path, len(f.Entries()), sizeText(uint64(f.Size())), took.Seconds(), float64(f.Size())/1e6/max(took.Seconds(), 1e-9))
	return ExitOK
}

// progressLine returns a progress callback drawing one updating line, or nil when w is not a
// terminal (a log or a pipe gets only the result).
func progressLine(w io.Writer, path string) func(done, total int64) {
	file, ok := w.(*os.File)
	if !ok {
		return nil
	}
	st, err := file.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	var last time.Time
	return func(done, total int64) {
		if now := time.Now(); now.Sub(last) >= 100*time.Millisecond || done == total {
			last = now
			pct := 100.0
			if total > 0 {
				pct = 100 * float64(done) / float64(total)
			}
			fmt.Fprintf(file, "\rverifying %s: %3.0f%% (%s of %s)\033[K", path, pct, sizeText(uint64(done)), sizeText(uint64(total)))
		}
	}
}
