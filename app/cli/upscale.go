package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"easel/app/backend"
	"easel/app/imagefile"
	"easel/app/settings"
	"easel/app/upscalers"
	"easel/engine/imageio"
)

func init() {
	register(&Command{
		Name:    "upscale",
		Usage:   "--model FILE|NAME [--scale N] [--tile N] [--backend auto|metal|cpu|emulator] [--upscalers DIR] IN --out OUT.png",
		Summary: "upscale a picture with a learned upscaler (Real-ESRGAN, ESRGAN, SRVGGNetCompact .pth/.safetensors)",
		Run:     runUpscale,
	})
}

const upscaleUsage = `usage: easel upscale --model FILE|NAME [--scale N] [--tile N] [--backend auto|metal|cpu|emulator] [--upscalers DIR] IN --out OUT.png

  --model FILE|NAME  an upscaler file (.pth or .safetensors), or the name of one in the upscalers
                     folder (--upscalers, else Easel's own)
  --scale N          the result's size over the picture's (default: the network's; another scale
                     is reached with Lanczos after the network, as A1111 does)
  --tile N           input tile side in pixels (default 0: as large as the memory budget allows;
                     -1: the whole picture in one piece)
  --backend B        auto (default: the app's setting), metal, cpu, or emulator (the Metal path on
                     the CPU, for testing)
  --upscalers DIR    the folder of upscalers --model names are looked up in
  --out OUT.png      where to write the result (the source's recipe is kept, the upscaler named)`

// ExitUpscaler is the exit code for an upscaler file that is missing, unreadable, truncated, not
// an upscaler Easel runs, or refused (a .pth that asks to run code).
const ExitUpscaler = 16

func runUpscale(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("upscale", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	model := fset.String("model", "", "")
	scale := fset.Float64("scale", 0, "")
	tile := fset.Int("tile", 0, "")
	be := fset.String("backend", "", "")
	dir := fset.String("upscalers", "", "")
	out := fset.String("out", "", "")
	var pos []string
	rest := args
	for {
		if err := fset.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(stdout, upscaleUsage)
				return ExitOK
			}
			fmt.Fprintf(stderr, "easel upscale: %v\n%s\n", err, upscaleUsage)
			return ExitUsage
		}
		if fset.NArg() == 0 {
			break
		}
		pos = append(pos, fset.Arg(0))
		rest = fset.Args()[1:]
	}
	switch {
	case len(pos) != 1:
		fmt.Fprintf(stderr, "easel upscale: give one picture to upscale (got %d)\n%s\n", len(pos), upscaleUsage)
		return ExitUsage
	case *model == "":
		fmt.Fprintf(stderr, "easel upscale: --model names the upscaler (a .pth or .safetensors file)\n%s\n", upscaleUsage)
		return ExitUsage
	case *out == "":
		fmt.Fprintf(stderr, "easel upscale: --out names the PNG to write\n%s\n", upscaleUsage)
		return ExitUsage
	case *scale < 0 || *scale > 16:
		fmt.Fprintf(stderr, "easel upscale: --scale %g: give a factor above 0 and at most 16\n", *scale)
		return ExitSettings
	}
	path, code, err := upscalerPath(*model, *dir)
	if err != nil {
		fmt.Fprintf(stderr, "easel upscale: %v\n", err)
		return code
	}
	img, err := imageio.Load(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "easel upscale: %v\n", err)
		return ExitImage
	}
	var src *imagefile.Metadata
	if strings.EqualFold(filepath.Ext(pos[0]), ".png") {
		src, _ = imagefile.ReadFile(pos[0]) // a PNG without readable chunks keeps no recipe
	}
	want := settings.Backend(*be)
	if *be == "" {
		want = settings.BackendAuto
		if st, err := settings.DefaultStore(); err == nil {
			if s, err := st.Load(); err == nil && s.Backend != "" {
				want = s.Backend
			}
		}
	}
	choice, err := backend.Choose(want)
	if err != nil {
		fmt.Fprintf(stderr, "easel upscale: --backend %s: %v\n", want, err)
		return ExitBackend
	}
	r, err := upscalers.Open(path, choice.Device)
	if err != nil {
		fmt.Fprintf(stderr, "easel upscale: %v\n", err)
		return ExitUpscaler
	}
	defer r.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	line := upscaleProgressLine(stderr)
	res, rep, err := r.Upscale(ctx, img, upscalers.Request{Scale: *scale, Tile: *tile, Progress: line})
	if line != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "easel upscale: stopped; nothing was written")
		return ExitCancelled
	case err != nil:
		fmt.Fprintf(stderr, "easel upscale: %v\n", err)
		return ExitFailure
	}
	if rep.Notice != "" {
		fmt.Fprintln(stderr, "easel upscale: "+rep.Notice)
	}
	up := imagefile.UpscaleSettings{Upscaler: r.Name, Network: r.Config().String(), Width: res.Rect.Dx(), Height: res.Rect.Dy(),
		Factor: float64(res.Rect.Dx()) / float64(img.Rect.Dx())}
	if err := imagefile.WriteUpscaled(*out, res, src, up); err != nil {
		fmt.Fprintf(stderr, "easel upscale: %v\n", err)
		return ExitWrite
	}
	tiles := "in one piece"
	if rep.Tiling.Tile > 0 {
		tiles = fmt.Sprintf("in %d² tiles", rep.Tiling.Tile)
	}
	fmt.Fprintf(stdout, "wrote %s: %d×%d → %d×%d with %s (%s), %s on %s, %.1f s\n", *out, img.Rect.Dx(), img.Rect.Dy(), res.Rect.Dx(), res.Rect.Dy(),
		r.Name, r.Config(), tiles, rep.Device, time.Since(start).Seconds())
	return ExitOK
}

// upscalerPath is --model as a file, or as a name in the upscalers folder.
func upscalerPath(model, dir string) (string, int, error) {
	if st, err := os.Stat(model); err == nil && !st.IsDir() {
		return model, 0, nil
	}
	lib, err := library(dir)
	if err != nil {
		return "", ExitUpscaler, err
	}
	if e, ok := lib.Find(model); ok {
		return e.Path, 0, nil
	}
	if _, err := os.Stat(model); err != nil && (strings.ContainsRune(model, os.PathSeparator) || upscalers.IsUpscalerFile(model)) {
		if errors.Is(err, fs.ErrNotExist) {
			return "", ExitUpscaler, fmt.Errorf("--model %s: no such file", model)
		}
		return "", ExitUpscaler, fmt.Errorf("--model %s: %v", model, err)
	}
	return "", ExitUpscaler, fmt.Errorf("--model %s: no such file, and no upscaler of that name in %s", model, lib.Dir)
}

// library is the folder --upscalers names, or Easel's own.
func library(dir string) (*upscalers.Library, error) {
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--upscalers %s is not a folder", dir)
		}
		return upscalers.New(dir), nil
	}
	return upscalers.Default()
}

// upscaleProgressLine draws "tile N of M" on one updating line, or is nil when w is not a terminal.
func upscaleProgressLine(w io.Writer) func(upscalers.Progress) {
	file, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := file.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return func(p upscalers.Progress) {
		if p.Passes > 1 {
			fmt.Fprintf(file, "\rupscaling: pass %d of %d, tile %d of %d\033[K", p.Pass, p.Passes, p.Done, p.Total)
			return
		}
		fmt.Fprintf(file, "\rupscaling: tile %d of %d\033[K", p.Done, p.Total)
	}
}
