package metal

import (
	"fmt"
	"sort"
	"unsafe"

	"easel/kernels/device"
)

// weightArena is the model file's mapping as device buffers: page-aligned no-copy chunks of at
// most the device's largest buffer, each holding whole tensors, so a kernel binds a weight as
// (chunk, offset) and nothing is copied.
type weightArena struct {
	chunks []device.Buffer
	bytes  int64
	place  map[uintptr]arenaSlot // by the address of a tensor's first byte
}

// arenaSlot is where one tensor lives in the arena.
type arenaSlot struct {
	chunk int
	off   int
}

// span is a byte range of the mapping.
type span struct {
	off, len int64
}

func alignDown(x, a int64) int64 { return x / a * a }
func alignUp(x, a int64) int64   { return (x + a - 1) / a * a }

// planChunks covers the tensor spans with page-aligned chunks of at most maxBuffer bytes (rounded
// up to whole pages), each holding whole tensors, greedily in file order. where[i] is the chunk
// of spans[i]. A tensor that alone does not fit a buffer declines.
func planChunks(spans []span, maxBuffer int64, name func(i int) string) (chunks []span, where []int, err error) {
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return spans[order[a]].off < spans[order[b]].off })
	where = make([]int, len(spans))
	for _, i := range order {
		s := spans[i]
		end := alignUp(s.off+s.len, pageSize)
		if n := len(chunks); n > 0 {
			c := &chunks[n-1]
			if s.off >= c.off && end-c.off <= maxBuffer {
				c.len = max(c.len, end-c.off)
				where[i] = n - 1
				continue
			}
		}
		start := alignDown(s.off, pageSize)
		if end-start > maxBuffer {
			size, limit := gbPair(end-start, maxBuffer)
			return nil, nil, decline("the weight %s needs a buffer of %s, more than this GPU's largest buffer (%s)", name(i), size, limit)
		}
		chunks = append(chunks, span{start, end - start})
		where[i] = len(chunks) - 1
	}
	return chunks, where, nil
}

// offsetIn returns where b starts inside mapping, or false when b is not a slice of it.
func offsetIn(mapping, b []byte) (int64, bool) {
	if len(mapping) == 0 || len(b) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mapping)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p+uintptr(len(b)) > base+uintptr(len(mapping)) {
		return 0, false
	}
	return int64(p - base), true
}

// arenaPlan is the arena's layout before any buffer exists, so its size can be checked first.
type arenaPlan struct {
	mapping []byte
	chunks  []span
	tensors [][]byte
	where   []int
	offs    []int64
}

// bytes is the arena's device memory.
func (p *arenaPlan) bytes() int64 {
	var n int64
	for _, c := range p.chunks {
		n += c.len
	}
	return n
}

// planArena places every tensor payload (slices of mapping) in chunks of at most maxBuffer bytes.
func planArena(mapping []byte, tensors [][]byte, names []string, maxBuffer int64) (*arenaPlan, error) {
	spans := make([]span, len(tensors))
	offs := make([]int64, len(tensors))
	for i, t := range tensors {
		off, ok := offsetIn(mapping, t)
		if !ok {
			return nil, decline("the weight %s is not in the model file's mapping, so it cannot be read in place", names[i])
		}
		if off%16 != 0 {
			return nil, decline("the weight %s starts at byte %d of the file, not on a 16-byte boundary", names[i], off)
		}
		spans[i], offs[i] = span{off, int64(len(t))}, off
	}
	chunks, where, err := planChunks(spans, maxBuffer, func(i int) string { return names[i] })
	if err != nil {
		return nil, err
	}
	return &arenaPlan{mapping: mapping, chunks: chunks, tensors: tensors, where: where, offs: offs}, nil
}

// build wraps the chunks of the mapping as no-copy buffers.
func (p *arenaPlan) build(dev device.Device) (*weightArena, error) {
	a := &weightArena{place: map[uintptr]arenaSlot{}}
	for i, c := range p.chunks {
		// The last chunk may run past the mapping's length to the end of its page: memory the
		// mapping's last page holds, which no tensor occupies and no kernel reads.
		buf, err := dev.NewBufferNoCopy(unsafe.Slice(&p.mapping[c.off], c.len))
		if err != nil {
			a.release()
			return nil, fmt.Errorf("metal: weight arena chunk %d (%s at byte %d of the file): %w", i, gb(c.len), c.off, err)
		}
		a.chunks = append(a.chunks, buf)
		a.bytes += c.len
	}
	for i, t := range p.tensors {
		a.place[uintptr(unsafe.Pointer(unsafe.SliceData(t)))] = arenaSlot{chunk: p.where[i], off: int(p.offs[i] - p.chunks[p.where[i]].off)}
	}
	return a, nil
}

// slot finds a tensor payload placed by build.
func (a *weightArena) slot(data []byte) (arenaSlot, bool) {
	s, ok := a.place[uintptr(unsafe.Pointer(unsafe.SliceData(data)))]
	return s, ok
}

func (a *weightArena) release() {
	for _, c := range a.chunks {
		c.Release()
	}
	a.chunks = nil
}
