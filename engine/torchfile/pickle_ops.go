package torchfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The opcodes the interpreter runs (unpickle, pickle.go).

// step runs one opcode, op, reading its arguments from the program; an opcode a state dict does
// not need is an error that names it.
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
