package prompthelp

import (
	"errors"
	"strings"
	"sync"

	"easel/app/textgen"
)

// writerFile is the model file the writings read: opened at the first writing, kept for the
// next ones, opened again when Settings names another model.
type writerFile struct {
	mu     sync.Mutex // guards the rest: a writing opens the file off the UI goroutine
	writer *textgen.Writer
	closer func() error
	path   string
}

// open is the writer of the model at path (opening it, and closing the one held, when it is
// not that one's).
func (f *writerFile) open(path string) (*textgen.Writer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.writer != nil && f.path == path {
		return f.writer, nil
	}
	f.closeLocked()
	if path == "" {
		return nil, errors.New("no model is chosen: choose the model file in Settings first")
	}
	w, closeFile, err := textgen.OpenFile(path)
	if err != nil {
		if errors.Is(err, textgen.ErrNoHead) {
			return nil, errors.New(strings.TrimPrefix(err.Error(), textgen.ErrNoHead.Error()+": "))
		}
		return nil, err
	}
	f.writer, f.closer, f.path = w, closeFile, path
	return w, nil
}

// close releases the file held, if any.
func (f *writerFile) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closeLocked()
}

func (f *writerFile) closeLocked() {
	if f.closer != nil {
		f.closer()
		f.writer, f.closer = nil, nil
	}
}
