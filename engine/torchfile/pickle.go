package torchfile

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"
)

// The values the interpreter builds. Python's int, float, str, bytes, None and bool become int64,
// float64, string, []byte, nil and bool.
type (
	tuple []any
	list  struct{ items []any }
	dict  struct {
		keys []any
		vals []any
	}
	// mark is the MARK opcode's position on the stack.
	mark struct{}
)

func (d *dict) set(k, v any) {
	if s, ok := k.(string); ok {
		for i, old := range d.keys {
			if o, ok := old.(string); ok && o == s {
				d.vals[i] = v
				return
			}
		}
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
}

// get is the value under the string key k, or nil.
func (d *dict) get(k string) any {
	for i, key := range d.keys {
		if s, ok := key.(string); ok && s == k {
			return d.vals[i]
		}
	}
	return nil
}

// storageRef is a persistent id: the storage data/<key> of a dtype and element count.
type storageRef struct {
	key   string
	dtype string
	size  int // bytes per element
	numel int64
}

// tensorRef is a tensor rebuilt by _rebuild_tensor(_v2): a strided view of a storage.
type tensorRef struct {
	st     *storageRef
	offset int64
	shape  []int64
	stride []int64
}

// unpickle runs the pickle program p (protocols 0–5) and returns the object it STOPs with. Only
// the opcodes a state dict needs exist; every global goes through lookup, every call through reduce.
func unpickle(p []byte) (any, error) {
	u := &machine{p: p, memo: map[int64]any{}}
	v, err := u.run()
	if err != nil {
		return nil, fmt.Errorf("in the pickle at byte %d: %w", u.at, err)
	}
	return v, nil
}

type machine struct {
	p     []byte
	at    int
	stack []any
	memo  map[int64]any
}

var errTruncated = errors.New("the pickle ends in the middle of an instruction (the file is truncated or damaged)")

func (u *machine) take(n int) ([]byte, error) {
	if n < 0 || n > len(u.p)-u.at {
		return nil, errTruncated
	}
	b := u.p[u.at : u.at+n]
	u.at += n
	return b, nil
}

func (u *machine) line() (string, error) {
	for i := u.at; i < len(u.p); i++ {
		if u.p[i] == '\n' {
			s := string(u.p[u.at:i])
			u.at = i + 1
			return s, nil
		}
	}
	return "", errTruncated
}

func (u *machine) uint(n int) (uint64, error) {
	b, err := u.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, nil
}

func (u *machine) push(v any) { u.stack = append(u.stack, v) }

func (u *machine) pop() (any, error) {
	if len(u.stack) == 0 {
		return nil, errors.New("the pickle pops an empty stack")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	if _, ok := v.(mark); ok {
		return nil, errors.New("the pickle pops a MARK as a value")
	}
	return v, nil
}

func (u *machine) top() (any, error) {
	if len(u.stack) == 0 {
		return nil, errors.New("the pickle reads an empty stack")
	}
	return u.stack[len(u.stack)-1], nil
}

// popMark pops everything above the topmost MARK and the MARK.
func (u *machine) popMark() ([]any, error) {
	for i := len(u.stack) - 1; i >= 0; i-- {
		if _, ok := u.stack[i].(mark); ok {
			items := append([]any(nil), u.stack[i+1:]...)
			u.stack = u.stack[:i]
			return items, nil
		}
	}
	return nil, errors.New("the pickle closes a MARK it never opened")
}

func (u *machine) str(n uint64) error {
	b, err := u.take(int(min(n, math.MaxInt32)))
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return errors.New("a string is not UTF-8")
	}
	u.push(string(b))
	return nil
}

func (u *machine) run() (any, error) {
	for {
		if u.at >= len(u.p) {
			return nil, errTruncated
		}
		op := u.p[u.at]
		u.at++
		if err := u.step(op); err != nil {
			if s, ok := err.(stop); ok {
				return s.v, nil
			}
			return nil, err
		}
	}
}

type stop struct{ v any }

func (stop) Error() string { return "STOP" }

func setItems(d *dict, items []any) error {
	if len(items)%2 != 0 {
		return errors.New("the pickle sets a key without a value")
	}
	for i := 0; i < len(items); i += 2 {
		d.set(items[i], items[i+1])
	}
	return nil
}

func trimLong(s string) string {
	if n := len(s); n > 0 && s[n-1] == 'L' {
		return s[:n-1]
	}
	return s
}

// littleSigned decodes a two's-complement little-endian integer of LONG1/LONG4.
func littleSigned(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, nil
	}
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	v := new(big.Int).SetBytes(be)
	if b[len(b)-1]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if !v.IsInt64() {
		return 0, errors.New("an integer does not fit in 64 bits")
	}
	return v.Int64(), nil
}

// kind names a value's Python type for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case tuple:
		return "tuple"
	case *list:
		return "list"
	case *dict:
		return "dict"
	case *tensorRef:
		return "tensor"
	case *storageRef:
		return "storage"
	case global:
		return "global " + v.(global).String()
	}
	return fmt.Sprintf("%T", v)
}
