package torchfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
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

func (u *machine) step(op byte) error {
	switch op {
	case 0x80: // PROTO
		v, err := u.uint(1)
		if err == nil && v > 5 {
			err = fmt.Errorf("pickle protocol %d is newer than any this reader knows (5)", v)
		}
		return err
	case 0x95: // FRAME
		_, err := u.uint(8)
		return err
	case '.': // STOP
		v, err := u.pop()
		if err != nil {
			return err
		}
		return stop{v}
	case '(': // MARK
		u.push(mark{})
	case '0': // POP
		if len(u.stack) == 0 {
			return errors.New("the pickle pops an empty stack")
		}
		u.stack = u.stack[:len(u.stack)-1]
	case '1': // POP_MARK
		_, err := u.popMark()
		return err
	case '2': // DUP
		v, err := u.top()
		if err != nil {
			return err
		}
		u.push(v)
	case 'N':
		u.push(nil)
	case 0x88:
		u.push(true)
	case 0x89:
		u.push(false)
	case 'J': // BININT
		v, err := u.uint(4)
		if err != nil {
			return err
		}
		u.push(int64(int32(uint32(v))))
	case 'K': // BININT1
		v, err := u.uint(1)
		if err != nil {
			return err
		}
		u.push(int64(v))
	case 'M': // BININT2
		v, err := u.uint(2)
		if err != nil {
			return err
		}
		u.push(int64(v))
	case 'I', 'L': // INT, LONG (text)
		s, err := u.line()
		if err != nil {
			return err
		}
		switch s {
		case "00":
			u.push(false)
		case "01":
			u.push(true)
		default:
			v, err := strconv.ParseInt(trimLong(s), 10, 64)
			if err != nil {
				return fmt.Errorf("an integer %q does not fit in 64 bits", s)
			}
			u.push(v)
		}
	case 0x8a, 0x8b: // LONG1, LONG4
		width := 1
		if op == 0x8b {
			width = 4
		}
		n, err := u.uint(width)
		if err != nil {
			return err
		}
		b, err := u.take(int(min(n, math.MaxInt32)))
		if err != nil {
			return err
		}
		v, err := littleSigned(b)
		if err != nil {
			return err
		}
		u.push(v)
	case 'G': // BINFLOAT (big-endian)
		b, err := u.take(8)
		if err != nil {
			return err
		}
		u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	case 'F': // FLOAT (text)
		s, err := u.line()
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("a float %q is not a number", s)
		}
		u.push(v)
	case 'X': // BINUNICODE
		n, err := u.uint(4)
		if err != nil {
			return err
		}
		return u.str(n)
	case 0x8c: // SHORT_BINUNICODE
		n, err := u.uint(1)
		if err != nil {
			return err
		}
		return u.str(n)
	case 0x8d: // BINUNICODE8
		n, err := u.uint(8)
		if err != nil {
			return err
		}
		return u.str(n)
	case 'T', 'U', 'B', 'C', 0x8e: // BINSTRING, SHORT_BINSTRING, BINBYTES, SHORT_BINBYTES, BINBYTES8
		width := map[byte]int{'T': 4, 'U': 1, 'B': 4, 'C': 1, 0x8e: 8}[op]
		n, err := u.uint(width)
		if err != nil {
			return err
		}
		b, err := u.take(int(min(n, math.MaxInt32)))
		if err != nil {
			return err
		}
		if op == 'T' || op == 'U' {
			u.push(string(b))
		} else {
			u.push(append([]byte(nil), b...))
		}
	case ')':
		u.push(tuple{})
	case 't':
		items, err := u.popMark()
		if err != nil {
			return err
		}
		u.push(tuple(items))
	case 0x85, 0x86, 0x87: // TUPLE1..3
		n := int(op-0x85) + 1
		items := make(tuple, n)
		for i := n - 1; i >= 0; i-- {
			v, err := u.pop()
			if err != nil {
				return err
			}
			items[i] = v
		}
		u.push(items)
	case ']':
		u.push(&list{})
	case 'l':
		items, err := u.popMark()
		if err != nil {
			return err
		}
		u.push(&list{items: items})
	case 'a', 'e': // APPEND, APPENDS
		items, err := u.popItems(op == 'e', 1)
		if err != nil {
			return err
		}
		t, err := u.top()
		if err != nil {
			return err
		}
		l, ok := t.(*list)
		if !ok {
			return fmt.Errorf("the pickle appends to a %s, not a list", kind(t))
		}
		l.items = append(l.items, items...)
	case '}':
		u.push(&dict{})
	case 'd':
		items, err := u.popMark()
		if err != nil {
			return err
		}
		d := &dict{}
		if err := setItems(d, items); err != nil {
			return err
		}
		u.push(d)
	case 's', 'u': // SETITEM, SETITEMS
		items, err := u.popItems(op == 'u', 2)
		if err != nil {
			return err
		}
		t, err := u.top()
		if err != nil {
			return err
		}
		d, ok := t.(*dict)
		if !ok {
			return fmt.Errorf("the pickle sets items of a %s, not a dict", kind(t))
		}
		return setItems(d, items)
	case 'g', 'h', 'j': // GET, BINGET, LONG_BINGET
		key, err := u.memoKey(op)
		if err != nil {
			return err
		}
		v, ok := u.memo[key]
		if !ok {
			return fmt.Errorf("the pickle reads memo %d, which it never stored", key)
		}
		u.push(v)
	case 'p', 'q', 'r', 0x94: // PUT, BINPUT, LONG_BINPUT, MEMOIZE
		key, err := u.memoKey(op)
		if err != nil {
			return err
		}
		v, err := u.top()
		if err != nil {
			return err
		}
		u.memo[key] = v
	case 'c': // GLOBAL "module\nname\n"
		module, err := u.line()
		if err != nil {
			return err
		}
		name, err := u.line()
		if err != nil {
			return err
		}
		g, err := lookup(module, name)
		if err != nil {
			return err
		}
		u.push(g)
	case 0x93: // STACK_GLOBAL
		nv, err := u.pop()
		if err != nil {
			return err
		}
		mv, err := u.pop()
		if err != nil {
			return err
		}
		module, ok1 := mv.(string)
		name, ok2 := nv.(string)
		if !ok1 || !ok2 {
			return errors.New("STACK_GLOBAL names a global with something other than two strings")
		}
		g, err := lookup(module, name)
		if err != nil {
			return err
		}
		u.push(g)
	case 'R': // REDUCE
		args, err := u.pop()
		if err != nil {
			return err
		}
		fn, err := u.pop()
		if err != nil {
			return err
		}
		a, ok := args.(tuple)
		if !ok {
			return fmt.Errorf("REDUCE's arguments are a %s, not a tuple", kind(args))
		}
		v, err := reduce(fn, a)
		if err != nil {
			return err
		}
		u.push(v)
	case 0x81: // NEWOBJ: cls.__new__(cls, *args); only an OrderedDict can be made
		args, err := u.pop()
		if err != nil {
			return err
		}
		cls, err := u.pop()
		if err != nil {
			return err
		}
		a, _ := args.(tuple)
		if g, ok := cls.(global); !ok || g != (global{"collections", "OrderedDict"}) {
			return fmt.Errorf("the pickle makes an object of %v, which a file of weights does not hold", cls)
		}
		v, err := reduce(cls, a)
		if err != nil {
			return err
		}
		u.push(v)
	case 'b': // BUILD: an object's state; dicts (OrderedDict's _metadata) and tensors ignore it
		if _, err := u.pop(); err != nil {
			return err
		}
		t, err := u.top()
		if err != nil {
			return err
		}
		switch t.(type) {
		case *dict, *tensorRef:
		default:
			return fmt.Errorf("the pickle sets the state of a %s", kind(t))
		}
	case 'Q': // BINPERSID
		pid, err := u.pop()
		if err != nil {
			return err
		}
		st, err := persistent(pid)
		if err != nil {
			return err
		}
		u.push(st)
	case 'P': // PERSID (text): torch never writes it
		return errors.New("the pickle uses a text persistent id, which PyTorch never writes")
	case 'i', 'o', 0x82, 0x83, 0x84, 0x92: // INST, OBJ, EXT1/2/4, NEWOBJ_EX
		return fmt.Errorf("the pickle builds an object with opcode %q, which a file of weights never needs; it was refused and nothing in it ran", op)
	default:
		return fmt.Errorf("unknown pickle opcode 0x%02x (the file is damaged or not a PyTorch checkpoint)", op)
	}
	return nil
}

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

// memoKey reads the memo key of a GET or PUT opcode: a decimal line (GET, PUT), one byte (BINGET,
// BINPUT) or four (LONG_BINGET, LONG_BINPUT); MEMOIZE's key is the memo's size.
func (u *machine) memoKey(op byte) (int64, error) {
	switch op {
	case 'g', 'p':
		s, err := u.line()
		if err != nil {
			return 0, err
		}
		key, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("a memo key %q is not a number", s)
		}
		return key, nil
	case 'h', 'q':
		v, err := u.uint(1)
		return int64(v), err
	case 'j', 'r':
		v, err := u.uint(4)
		return int64(v), err
	default: // MEMOIZE
		return int64(len(u.memo)), nil
	}
}

// popItems pops what an APPEND or SETITEM opcode adds: everything above the mark when marked
// (APPENDS, SETITEMS), else the top n values, in the order they were pushed.
func (u *machine) popItems(marked bool, n int) ([]any, error) {
	if marked {
		return u.popMark()
	}
	items := make([]any, n)
	for i := n - 1; i >= 0; i-- {
		v, err := u.pop()
		if err != nil {
			return nil, err
		}
		items[i] = v
	}
	return items, nil
}
