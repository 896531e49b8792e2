package convert

import "time"

// Progress is a conversion's state, reported after each tensor and at most every
// progressInterval while a large one is being read.
type Progress struct {
	Tensor                    string // the tensor being written (CMF name)
	TensorsDone, TensorsTotal int
	BytesDone, BytesTotal     int64 // source bytes read so far, and to read in all (q8_2f tensors are read twice)
	Elapsed                   time.Duration
}

// ETA estimates the time left from the rate so far; 0 until there is a rate.
func (p Progress) ETA() time.Duration {
	if p.BytesDone <= 0 || p.Elapsed <= 0 {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.BytesTotal-p.BytesDone) / float64(p.BytesDone))
}

// progressInterval bounds how often progress is reported within one tensor.
const progressInterval = 200 * time.Millisecond

// meter counts source bytes and calls the progress callback. It is used by one goroutine at a
// time: the converting goroutine, or the encoder it has handed a tensor to and waits for.
type meter struct {
	report   func(Progress)
	state    Progress
	start    time.Time
	lastCall time.Time
}

func (m *meter) add(n int64) {
	m.state.BytesDone += n
	if m.report != nil && time.Since(m.lastCall) >= progressInterval {
		m.emit()
	}
}

func (m *meter) emit() {
	if m.report == nil {
		return
	}
	m.lastCall = time.Now()
	m.state.Elapsed = time.Since(m.start)
	m.report(m.state)
}
