package download

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"easel/engine/freespace"
)

// Progress is reported while downloading.
type Progress struct {
	File        string // the file being fetched
	Files, Done int    // files in the plan, files complete
	Bytes       int64  // bytes present locally (complete files and partial ones)
	Total       int64  // bytes of the whole plan
	Rate        float64
	ETA         time.Duration
}

// Downloader fetches files of a Remote into Dest, keeping partial files (".part") so that a paused
// or interrupted download resumes where it stopped.
type Downloader struct {
	Remote   *Remote
	Dest     string
	Progress func(Progress) // called from the downloading goroutine; may be nil
	// Retries is how many times a file that arrived corrupted, or a connection that broke, is
	// fetched again before giving up (default 2).
	Retries int
	// ReportEvery is the least time between two Progress calls while bytes arrive (default
	// 100 ms); the start and the end of each file are always reported.
	ReportEvery time.Duration
}

// Wanted keeps the files a converter needs: configs, weights, the tokenizer, the license. Sample
// images and documentation are skipped.
func Wanted(files []File) []File {
	var out []File
	for _, f := range files {
		switch ext := filepath.Ext(f.Path); {
		case ext == ".json", ext == ".safetensors", ext == ".jinja", ext == ".txt":
			out = append(out, f)
		case filepath.Base(f.Path) == "LICENSE", filepath.Base(f.Path) == "README.md":
			out = append(out, f)
		}
	}
	return out
}

// ErrNoSpace means the destination disk cannot hold what remains to download.
var ErrNoSpace = errors.New("not enough free disk space")

// Run downloads every file not yet present and verified. Cancelling ctx pauses: partial files
// stay, and a later Run resumes them.
func (d *Downloader) Run(ctx context.Context, files []File) error {
	var total, have int64
	for _, f := range files {
		total += f.Size
		have += d.present(f)
	}
	if need := total - have; need > 0 {
		if free, err := freeBytes(d.Dest); err == nil && free < uint64(need)+64<<20 {
			return fmt.Errorf("%w: the download needs %.1f GB more in %s but only %.1f GB are free; free some space or choose another folder",
				ErrNoSpace, float64(need)/1e9, d.Dest, float64(free)/1e9)
		}
	}
	st := &tracker{d: d, files: len(files), total: total, bytes: have, start: time.Now(), startBytes: have}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.one(ctx, f, st); err != nil {
			return err
		}
		st.done++
		st.report(f.Path)
	}
	return nil
}

// present counts the bytes of f already on disk (complete or partial).
func (d *Downloader) present(f File) int64 {
	if fi, err := os.Stat(d.local(f)); err == nil && fi.Size() == f.Size {
		return f.Size
	}
	if fi, err := os.Stat(d.local(f) + ".part"); err == nil && fi.Size() <= f.Size {
		return fi.Size()
	}
	return 0
}

func (d *Downloader) local(f File) string { return filepath.Join(d.Dest, filepath.FromSlash(f.Path)) }

func (d *Downloader) one(ctx context.Context, f File, st *tracker) error {
	final := d.local(f)
	if fi, err := os.Stat(final); err == nil && fi.Size() == f.Size {
		if err := verify(final, f); err == nil {
			return nil
		}
		// A complete-looking file that fails its hash: fetch it again from scratch.
		st.bytes -= fi.Size()
		if err := os.Remove(final); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(final), err)
	}
	retries := d.Retries
	if retries == 0 {
		retries = 2
	}
	part := final + ".part"
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		err := d.fetch(ctx, f, part, st)
		if err == nil {
			if err = verify(part, f); err == nil {
				return os.Rename(part, final)
			}
			// Corrupted in transit (or on the server's side): start the file over.
			if fi, statErr := os.Stat(part); statErr == nil {
				st.bytes -= fi.Size()
			}
			os.Remove(part)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("downloading %s failed %d times, last: %w; try again later (the part already downloaded is kept)", f.Path, retries+1, lastErr)
}

// permanentError is a failure that retrying cannot fix (404, 403).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// fetch appends the missing bytes of f to part, using a Range request when part has some already.
func (d *Downloader) fetch(ctx context.Context, f File, part string, st *tracker) error {
	var offset int64
	if fi, err := os.Stat(part); err == nil {
		offset = fi.Size()
		if offset > f.Size {
			os.Remove(part)
			st.bytes -= offset
			offset = 0
		}
	}
	if offset == f.Size && f.Size > 0 {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.Remote.FileURL(f.Path), nil)
	if err != nil {
		return err
	}
	if offset > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(offset, 10)+"-")
	}
	resp, err := d.Remote.client().Do(req)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", f.Path, err)
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	switch resp.StatusCode {
	case http.StatusPartialContent:
	case http.StatusOK:
		// The server ignored the range: start over.
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		st.bytes -= offset
	case http.StatusRequestedRangeNotSatisfiable:
		os.Remove(part)
		st.bytes -= offset
		return fmt.Errorf("downloading %s: the server refused to resume at byte %d; starting the file over", f.Path, offset)
	case http.StatusNotFound:
		return &permanentError{fmt.Errorf("the repository %s has no file %s (HTTP 404): the model may have been moved or renamed; check for an Easel update", d.Remote.Repo, f.Path)}
	case http.StatusUnauthorized, http.StatusForbidden:
		return &permanentError{fmt.Errorf("the hub refused %s (%s): accept the model's license on its page while signed in, then try again", f.Path, resp.Status)}
	default:
		return fmt.Errorf("downloading %s: the server answered %s", f.Path, resp.Status)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", part, err)
	}
	buf := make([]byte, 1<<20)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				out.Close()
				return &permanentError{fmt.Errorf("writing %s: %w (is the disk full?)", part, werr)}
			}
			st.bytes += int64(n)
			st.report(f.Path)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return fmt.Errorf("downloading %s: the connection broke: %w", f.Path, rerr)
		}
	}
	return out.Close()
}

// verify checks a file's size and hash against the repository's metadata: SHA-256 for LFS files,
// the git blob SHA-1 for files kept in git.
func verify(p string, f File) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != f.Size {
		return fmt.Errorf("%s has %d bytes, the repository says %d", f.Path, fi.Size(), f.Size)
	}
	var h hash.Hash
	want := f.SHA256
	switch {
	case f.SHA256 != "":
		h = sha256.New()
	case f.GitOID != "":
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", f.Size)
		want = f.GitOID
	default:
		return nil // the metadata gives no hash; the size matched
	}
	if _, err := io.Copy(h, fh); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s is corrupted: hash %s, the repository says %s", f.Path, got, want)
	}
	return nil
}

type tracker struct {
	d                 *Downloader
	files, done       int
	bytes, total      int64
	start             time.Time
	startBytes        int64
	lastReport        time.Time
	lastReportedBytes int64
}

func (t *tracker) report(file string) {
	if t.d.Progress == nil {
		return
	}
	now := time.Now()
	every := t.d.ReportEvery
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	if now.Sub(t.lastReport) < every && t.done < t.files && t.bytes != t.total {
		return
	}
	t.lastReport = now
	p := Progress{File: file, Files: t.files, Done: t.done, Bytes: t.bytes, Total: t.total}
	if el := now.Sub(t.start).Seconds(); el > 0 {
		p.Rate = float64(t.bytes-t.startBytes) / el
		if p.Rate > 0 {
			p.ETA = time.Duration(float64(t.total-t.bytes) / p.Rate * float64(time.Second))
		}
	}
	t.d.Progress(p)
}

// freeBytes is the space available on the disk of dir (which may not exist yet), counted as the
// OS's file manager counts it (engine/freespace: purgeable space included on macOS).
func freeBytes(dir string) (uint64, error) {
	n, err := freespace.Available(dir)
	return uint64(max(n, 0)), err
}
