package cmf

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of failure, for errors.Is. Every error this package returns wraps one of them inside
// an *Error that names the file (and the tensor, when one is at fault) and says what to do.
var (
	ErrNotCMF      = errors.New("not a CMF model file")
	ErrTruncated   = errors.New("model file is truncated")
	ErrCorrupt     = errors.New("model file is damaged")
	ErrUnsupported = errors.New("model file needs a feature Easel does not support")
	ErrMissing     = errors.New("model file lacks a tensor")
	ErrHash        = errors.New("model file content does not match its hash")
	ErrWrite       = errors.New("cannot write model file")
	ErrClosed      = errors.New("model file is closed")
)

// Error is a failure about one model file: what (Kind), where (Path, Tensor) and what to do.
type Error struct {
	Kind   error
	Path   string
	Tensor string // empty when no single tensor is at fault
	Detail string
	Advice string
	Err    error // the underlying cause (an *os.PathError, …), if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Tensor != "" {
		fmt.Fprintf(&b, ": tensor %q", e.Tensor)
	}
	b.WriteString(": ")
	b.WriteString(e.Detail)
	if e.Advice != "" {
		b.WriteString("; ")
		b.WriteString(e.Advice)
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause, so errors.Is(err, cmf.ErrTruncated) and
// errors.Is(err, fs.ErrNotExist) both work.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// Advice shared by the reader's errors.
const (
	adviceRedownload = "the file is damaged or was not written completely: download or convert it again"
	adviceReconvert  = "convert the model again with `easel convert`"
	adviceNotCMF     = "choose a .cmf model file (made by `easel convert` or cortiq)"
)

func corrupt(path, tensor, advice, format string, args ...any) *Error {
	return &Error{Kind: ErrCorrupt, Path: path, Tensor: tensor, Detail: fmt.Sprintf(format, args...), Advice: advice}
}
