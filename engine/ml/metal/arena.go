package metal

import (
	"fmt"
	"sort"
	"unsafe"

	"easel/kernels/device"
)

// WeightArena is the model file's mapping as device buffers: page-aligned no-copy chunks of at
// most the device's largest buffer, each holding whole tensors, so a kernel binds a weight as
// (chunk, offset) and nothing is copied.
type WeightArena struct {
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
		end := alignUp(s.off+s.len, PageSize)
		if n := len(chunks); n > 0 {
			c := &chunks[n-1]
			if s.off >= c.off && end-c.off <= maxBuffer {
				c.len = max(c.len, end-c.off)
				where[i] = n - 1
				continue
			}
		}
		start := alignDown(s.off, PageSize)
		if end-start > maxBuffer {
			size, limit := FormatBytePair(end-start, maxBuffer)
			return nil, nil, Decline("the weight %s needs a buffer of %s, more than this GPU's largest buffer (%s)", name(i), size, limit)
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

// InMapping reports whether b is a slice of mapping (a payload a weight arena can wrap in place).
func InMapping(mapping, b []byte) bool {
	_, ok := offsetIn(mapping, b)
	return ok
}

// WeightArenaPlan is the layout of a weight arena before any buffer exists, so its size can be
// checked against the device's limits first.
type WeightArenaPlan struct {
	mapping []byte
	chunks  []span
	tensors [][]byte
	where   []int
	offs    []int64
}

// Bytes is the device memory the arena will take.
func (p *WeightArenaPlan) Bytes() int64 {
	var n int64
	for _, c := range p.chunks {
		n += c.len
	}
	return n
}

// Chunks is the byte length of every chunk, for a memory plan.
func (p *WeightArenaPlan) Chunks() []int64 {
	out := make([]int64, len(p.chunks))
	for i, c := range p.chunks {
		out[i] = c.len
	}
	return out
}

// PlanWeightArena places tensor payloads (slices of mapping, each 16-byte aligned) in page-aligned
// chunks of at most maxBuffer bytes. names name the tensors in decline sentences.
func PlanWeightArena(mapping []byte, tensors [][]byte, names []string, maxBuffer int64) (*WeightArenaPlan, error) {
	spans := make([]span, len(tensors))
	offs := make([]int64, len(tensors))
	for i, t := range tensors {
		off, ok := offsetIn(mapping, t)
		if !ok {
			return nil, Decline("the weight %s is not in the model file's mapping, so it cannot be read in place", names[i])
		}
		if off%16 != 0 {
			return nil, Decline("the weight %s starts at byte %d of the file, not on a 16-byte boundary", names[i], off)
		}
		spans[i], offs[i] = span{off, int64(len(t))}, off
	}
	chunks, where, err := planChunks(spans, maxBuffer, func(i int) string { return names[i] })
	if err != nil {
		return nil, err
	}
	return &WeightArenaPlan{mapping: mapping, chunks: chunks, tensors: tensors, where: where, offs: offs}, nil
}

// Build wraps the chunks of the mapping as no-copy buffers of dev.
func (p *WeightArenaPlan) Build(dev device.Device) (*WeightArena, error) {
	a := &WeightArena{place: map[uintptr]arenaSlot{}}
	for i, c := range p.chunks {
		// The last chunk may run past the mapping's length to the end of its page: memory the
		// mapping's last page holds, which no tensor occupies and no kernel reads.
		buf, err := dev.NewBufferNoCopy(unsafe.Slice(&p.mapping[c.off], c.len))
		if err != nil {
			a.Release()
			return nil, fmt.Errorf("metal: weight arena chunk %d (%s at byte %d of the file): %w", i, FormatBytes(c.len), c.off, err)
		}
		a.chunks = append(a.chunks, buf)
		a.bytes += c.len
	}
	for i, t := range p.tensors {
		a.place[uintptr(unsafe.Pointer(unsafe.SliceData(t)))] = arenaSlot{chunk: p.where[i], off: int(p.offs[i] - p.chunks[p.where[i]].off)}
	}
	return a, nil
}

// Bind returns the buffer and byte offset of a payload placed by Build.
func (a *WeightArena) Bind(data []byte) (device.Buffer, int, bool) {
	s, ok := a.place[uintptr(unsafe.Pointer(unsafe.SliceData(data)))]
	if !ok {
		return nil, 0, false
	}
	return a.chunks[s.chunk], s.off, true
}

// Bytes is the arena's device memory.
func (a *WeightArena) Bytes() int64 { return a.bytes }

// Chunks is how many buffers the arena is split into.
func (a *WeightArena) Chunks() int { return len(a.chunks) }

// Release frees the buffers (not the mapping).
func (a *WeightArena) Release() {
	for _, c := range a.chunks {
		c.Release()
	}
	a.chunks = nil
}
