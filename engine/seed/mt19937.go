package seed

// mt19937 is the 32-bit Mersenne Twister exactly as PyTorch's at::mt19937 runs it (the standard
// MT19937 with the standard seeding recurrence; the seed is truncated to its low 32 bits).
type mt19937 struct {
	state [mtN]uint32
	next  int // index of the next word to temper; mtN means "regenerate first"
}

const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// seed is at::mt19937::init_with_uint32: state[0] = seed mod 2³², then the Knuth recurrence.
func (m *mt19937) seed(seed uint64) {
	m.state[0] = uint32(seed)
	for j := 1; j < mtN; j++ {
		prev := m.state[j-1]
		m.state[j] = 1812433253*(prev^(prev>>30)) + uint32(j)
	}
	m.next = mtN
}

// twist regenerates all 624 words of state.
func (m *mt19937) twist() {
	for k := 0; k < mtN; k++ {
		y := m.state[k]&mtUpperMask | m.state[(k+1)%mtN]&mtLowerMask
		v := m.state[(k+mtM)%mtN] ^ y>>1
		if y&1 != 0 {
			v ^= mtMatrixA
		}
		m.state[k] = v
	}
	m.next = 0
}

// uint32 is the next tempered output word.
func (m *mt19937) uint32() uint32 {
	if m.next >= mtN {
		m.twist()
	}
	y := m.state[m.next]
	m.next++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}
