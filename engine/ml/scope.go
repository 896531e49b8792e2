package ml

import "fmt"

// Scope is how a network is written against the op set: it keeps the first error of a sequence
// of ops, so the network's code reads as its math — one op per line, e.Do(e.B.RMSNorm(…)) — and
// the caller checks Err once at the end. Ops after a failure still run but see nil or mismatched
// tensors and fail fast; their errors are dropped in favour of the first.
//
// A scope can also own tensors: Temp allocates one that Release frees (newest first), so a
// function that makes intermediates frees them all with one deferred Release instead of by hand
// after every op. New allocates a tensor the caller keeps. Where memory is tight (a chain of
// large activations, each needed only until the next one exists) Free drops one owned tensor
// early; whatever is still owned when the ops fail is freed by Release all the same.
//
// A Scope is used by one goroutine at a time.
type Scope struct {
	// B is the backend the ops run on (often a WithContext wrapper).
	B     Backend
	err   error
	owned []Tensor
}

// NewScope starts a scope over b.
func NewScope(b Backend) *Scope { return &Scope{B: b} }

// Do keeps err if it is the first error of the scope.
func (s *Scope) Do(err error) {
	if s.err == nil && err != nil {
		s.err = err
	}
}

// Err is the scope's first error, or nil.
func (s *Scope) Err() error { return s.err }

// New allocates a zeroed tensor the caller owns.
func (s *Scope) New(shape ...int) Tensor {
	t, err := s.B.New(shape...)
	s.Do(err)
	return t
}

// Temp allocates a zeroed tensor the scope owns: Release frees it.
func (s *Scope) Temp(shape ...int) Tensor { return s.Own(s.New(shape...)) }

// Own hands t to the scope (Release frees it) and returns it; nil is ignored.
func (s *Scope) Own(t Tensor) Tensor {
	if t != nil {
		s.owned = append(s.owned, t)
	}
	return t
}

// Release frees every tensor the scope owns, newest first. The scope stays usable.
func (s *Scope) Release() {
	for i := len(s.owned) - 1; i >= 0; i-- {
		s.B.Free(s.owned[i])
	}
	s.owned = s.owned[:0]
}

// Free frees t now if the scope owns it and forgets it, so Release does not free it again; a
// tensor the scope does not own (a caller's input) and nil are left alone. Use it, not B.Free, on
// an owned tensor.
func (s *Scope) Free(t Tensor) {
	if t == nil {
		return
	}
	for i := len(s.owned) - 1; i >= 0; i-- {
		if s.owned[i] == t {
			s.owned = append(s.owned[:i], s.owned[i+1:]...)
			s.B.Free(t)
			return
		}
	}
}

// Upload copies host values into a new tensor the caller owns.
func (s *Scope) Upload(v []float32, shape ...int) Tensor {
	t, err := s.B.Upload(v, shape...)
	s.Do(err)
	return t
}

// Rows is a view of rows [r0, r0+n) of a [R, cols] tensor.
func (s *Scope) Rows(t Tensor, r0, n, cols int) Tensor {
	if t == nil {
		s.Do(fmt.Errorf("a row view of a missing tensor"))
		return nil
	}
	v, err := s.B.Slice(t, r0*cols, n, cols)
	s.Do(err)
	return v
}

// Slice is Backend.Slice under the scope.
func (s *Scope) Slice(t Tensor, offset int, shape ...int) Tensor {
	if t == nil {
		s.Do(fmt.Errorf("a view of a missing tensor"))
		return nil
	}
	v, err := s.B.Slice(t, offset, shape...)
	s.Do(err)
	return v
}

// Download copies a tensor to the host; nothing once the scope has failed.
func (s *Scope) Download(t Tensor) []float32 {
	if s.err != nil {
		return nil
	}
	v, err := s.B.Download(t)
	s.Do(err)
	return v
}
