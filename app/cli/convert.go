package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"easel/engine/convert"
)

func init() {
	register(&Command{
		Name:    "convert",
		Usage:   "SNAPSHOT_DIR OUT.cmf [--profile cortiq|q8|f16] [--no-vision]",
		Summary: "convert a Hugging Face snapshot into one .cmf model file",
		Run:     runConvert,
	})
}

const convertUsage = `usage: easel convert SNAPSHOT_DIR OUT.cmf [--profile cortiq|q8|f16] [--no-vision]

  --profile cortiq  4-bit DiT (q4tp), 8-bit text encoder; cortiq's layout (default, about 12.7 GB)
  --profile q8      8-bit DiT (q8_2f) as well
  --profile f16     every weight at the snapshot's own precision (bf16 stays bf16)
  --no-vision       leave out the vision tower (no condition images)`

// runConvert converts a snapshot with a progress line on a terminal; Ctrl-C cancels cleanly.
func runConvert(args []string, stdout, stderr io.Writer) int {
	var positional []string
	opts := convert.Options{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--profile" || a == "-profile":
			if i+1 == len(args) {
				fmt.Fprintln(stderr, "easel convert: --profile needs a value\n"+convertUsage)
				return ExitUsage
			}
			i++
			a = "--profile=" + args[i]
			fallthrough
		case strings.HasPrefix(a, "--profile=") || strings.HasPrefix(a, "-profile="):
			p, err := convert.ParseProfile(a[strings.Index(a, "=")+1:])
			if err != nil {
				fmt.Fprintf(stderr, "easel convert: %v\n", err)
				return ExitUsage
			}
			opts.Profile = p
		case a == "--no-vision" || a == "-no-vision":
			opts.NoVision = true
		case a == "-h" || a == "--help":
			fmt.Fprintln(stdout, convertUsage)
			return ExitOK
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "easel convert: unknown option %q\n%s\n", a, convertUsage)
			return ExitUsage
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) != 2 {
		fmt.Fprintln(stderr, convertUsage)
		return ExitUsage
	}
	dir, out := positional[0], positional[1]

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.Progress = convertProgressLine(stderr)
	res, err := convert.Convert(ctx, dir, out, opts)
	if opts.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "easel convert: cancelled; %s was not written\n", out)
		} else {
			fmt.Fprintf(stderr, "easel convert: %v\n", err)
		}
		return ExitFailure
	}
	secs := max(res.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "%s: %d tensors, %s, from %s of weights in %.1f s (%.0f MB/s)\n",
		res.Path, res.Tensors, sizeText(uint64(res.FileBytes)), sizeText(uint64(res.SourceBytes)), secs, float64(res.SourceBytes)/1e6/secs)
	if len(res.Skipped) > 0 {
		fmt.Fprintf(stdout, "left out %d tensors the pipeline never runs:\n", len(res.Skipped))
		for _, s := range res.Skipped {
			fmt.Fprintf(stdout, "  %s\n", s)
		}
	}
	return ExitOK
}

// convertProgressLine draws "tensors, MB, MB/s, ETA" on one updating line, or is nil when w is not
// a terminal.
func convertProgressLine(w io.Writer) func(convert.Progress) {
	file, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := file.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return func(p convert.Progress) {
		rate := float64(p.BytesDone) / 1e6 / max(p.Elapsed.Seconds(), 1e-9)
		eta := "--"
		if d := p.ETA(); d > 0 {
			eta = d.Round(time.Second).String()
		}
		fmt.Fprintf(file, "\rconverting: %d/%d tensors, %.0f of %.0f MB, %.0f MB/s, %s left\033[K",
			p.TensorsDone, p.TensorsTotal, float64(p.BytesDone)/1e6, float64(p.BytesTotal)/1e6, rate, eta)
	}
}
