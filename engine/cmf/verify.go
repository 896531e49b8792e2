package cmf

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"easel/engine/mmapfile"
)

// verifyChunk is how many bytes one worker hashes at a time (a multiple of 8, so that chunks of
// one payload can be hashed independently and combined, see accumulateWords).
const verifyChunk = 8 << 20

// hashCheck is one recorded hash and the bytes it covers.
type hashCheck struct {
	what   string // "header", "directory", "vocab", … or "" for a tensor
	tensor string
	span   Section
	want   uint64
}

// Verify checks the whole file: bounds and payload sizes of every entry (as Open did), the
// envelope's header and directory hashes, the section hashes in the header and the hash of every
// tensor payload. Hashing runs on all cores; progress, when not nil, is called from the calling
// goroutine with bytes hashed so far and the total. The error names the file and the first
// tensor or section at fault, in file order.
func (f *File) Verify(progress func(done, total int64)) error {
	return f.VerifyContext(context.Background(), progress)
}

// VerifyContext is Verify that stops when ctx is cancelled (a 12 GB file takes a while), returning
// an error that wraps ctx's error.
func (f *File) VerifyContext(ctx context.Context, progress func(done, total int64)) (err error) {
	if f.data == nil {
		return f.closed("")
	}
	defer mmapfile.Recover(&err) // the file went away while it was read: a *mmapfile.FaultError
	defer mmapfile.Guard()()
	for i := range f.entries {
		if err := checkEntry(f.path, &f.entries[i], f.env.Data.Len); err != nil {
			return err
		}
	}
	checks, err := f.hashChecks()
	if err != nil {
		return err
	}
	var total int64
	for _, c := range checks {
		total += int64(c.span.Len)
	}
	got := f.hashAll(ctx, checks, total, progress)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("verifying %s stopped before the end: %w", f.path, err)
	}
	var failed []int
	for i, c := range checks {
		if got[i] != c.want {
			failed = append(failed, i)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	first := checks[failed[0]]
	detail := fmt.Sprintf("content does not match its hash (recorded %016x, computed %016x)", first.want, got[failed[0]])
	if first.what != "" {
		detail = fmt.Sprintf("the %s section does not match its hash (recorded %016x, computed %016x)", first.what, first.want, got[failed[0]])
	}
	if len(failed) > 1 {
		var others []string
		for _, i := range failed[1:min(len(failed), 6)] {
			if checks[i].what != "" {
				others = append(others, "the "+checks[i].what+" section")
			} else {
				others = append(others, strconv.Quote(checks[i].tensor))
			}
		}
		more := ""
		if len(failed) > 6 {
			more = fmt.Sprintf(" and %d more", len(failed)-6)
		}
		detail += fmt.Sprintf("; %d more fail too: %s%s", len(failed)-1, strings.Join(others, ", "), more)
	}
	return &Error{Kind: ErrHash, Path: f.path, Tensor: first.tensor, Detail: detail, Advice: adviceRedownload}
}

// hashChecks lists every hash the file records, in file order: header, directory, the optional
// sections named in section_hashes, then the tensors.
func (f *File) hashChecks() ([]hashCheck, error) {
	var checks []hashCheck
	if f.env.HeaderHash != 0 {
		checks = append(checks, hashCheck{what: "header", span: f.env.Header, want: f.env.HeaderHash})
	}
	if f.env.DirHash != 0 {
		checks = append(checks, hashCheck{what: "directory", span: f.env.Dir, want: f.env.DirHash})
	}
	if sh := f.header.SectionHashes; sh != nil {
		for _, s := range []struct {
			name string
			hex  string
			span Section
		}{{"masks", sh.Masks, f.env.Masks}, {"vocab", sh.Vocab, f.env.Vocab}, {"index", sh.Index, f.env.Index}} {
			if s.hex == "" {
				continue
			}
			want, err := strconv.ParseUint(s.hex, 16, 64)
			if err != nil {
				return nil, corrupt(f.path, "", adviceRedownload, "the header's %s section hash %q is not 16 hex digits", s.name, s.hex)
			}
			if want != 0 && s.span.Len > 0 {
				checks = append(checks, hashCheck{what: s.name, span: s.span, want: want})
			}
		}
	}
	for i := range f.entries {
		e := &f.entries[i]
		checks = append(checks, hashCheck{tensor: e.Name, span: Section{f.env.Data.Off + e.Offset, e.Size}, want: e.Hash})
	}
	return checks, nil
}

// hashAll computes Hash64 of every check's bytes, splitting large spans into chunks hashed in
// parallel and combined.
func (f *File) hashAll(ctx context.Context, checks []hashCheck, total int64, progress func(done, total int64)) []uint64 {
	type job struct {
		check int
		off   uint64 // absolute
		len   uint64 // a multiple of 8
		word  uint64 // index of the chunk's first word within its span
	}
	type result struct {
		check int
		acc   uint64
		n     uint64
	}
	jobs := make(chan job, 64)
	results := make(chan result, 64)
	quit := make(chan struct{}) // closed when the caller stops reading (a worker faulted)
	defer close(quit)
	workers := runtime.GOMAXPROCS(0)
	if total < 4*verifyChunk {
		workers = 1 // not worth the goroutines
	}
	go func() {
		defer close(jobs)
		for i, c := range checks {
			whole := c.span.Len &^ 7
			for off := uint64(0); off < whole; off += verifyChunk {
				select {
				case jobs <- job{i, c.span.Off + off, min(verifyChunk, whole-off), off / 8}:
				case <-ctx.Done():
					return // the partial sums are discarded by the caller
				case <-quit:
					return
				}
			}
		}
	}()
	// The workers read the mapping: in a Group, a fault (the file went away) comes back to this
	// goroutine at Wait. Each one ends by sending check −1, also when it panicked.
	var g mmapfile.Group
	for range workers {
		g.Go(func() {
			defer func() { results <- result{check: -1} }()
			for j := range jobs {
				results <- result{j.check, accumulateWords(f.data[j.off:j.off+j.len], j.word), j.len}
			}
		})
	}

	acc := make([]uint64, len(checks))
	var done int64
	for running := workers; running > 0; {
		r := <-results
		if r.check < 0 {
			running--
			continue
		}
		acc[r.check] ^= r.acc
		done += int64(r.n)
		if progress != nil {
			progress(done, total)
		}
	}
	g.Wait()
	sums := make([]uint64, len(checks))
	for i, c := range checks {
		whole := c.span.Len &^ 7
		tail := f.data[c.span.Off+whole : c.span.End()]
		sums[i] = finishHash(acc[i], whole/8, tail, c.span.Len)
		done += int64(len(tail))
	}
	if progress != nil {
		progress(done, total)
	}
	return sums
}
