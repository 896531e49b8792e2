// Command mkcalib draws the live preview's calibration pictures (assets/calibration/*.png) with
// assets/calibration/calibimage: one picture of every kind for each of the set's seeds. They are generated
// here, not collected, so they carry no licence question; running it again reproduces the
// committed files byte for byte.
//
// Usage: go run ./tools/mkcalib [-o assets/calibration]
package main

import (
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"

	"easel/assets/calibration/calibimage"
)

func main() {
	out := flag.String("o", "assets/calibration", "output folder")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "mkcalib:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, seed := range calibimage.Seeds {
		for k := range calibimage.NumKinds {
			img := calibimage.Draw(k, seed, calibimage.Side, calibimage.Side)
			f, err := os.Create(filepath.Join(dir, calibimage.FileName(k, seed)))
			if err != nil {
				return err
			}
			if err := png.Encode(f, img); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}
