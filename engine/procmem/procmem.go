package procmem

// Sample is the process's memory now and its peak: since the last ResetPeak where the peak can be
// reset, else over the process's life. Zero where the OS does not say.
type Sample struct {
	Now, Peak int64
}

// Interval measures the peak footprint of one stretch of work (a stage).
type Interval struct {
	start Sample
	reset bool
}

// Begin starts an interval: it resets the process's peak where it can and samples the footprint.
func Begin() Interval {
	reset := ResetPeak()
	return Interval{start: Read(), reset: reset}
}

// End is the interval's peak footprint: exact when the peak was reset at Begin, or when the
// interval set a new peak for the process; else the larger of the footprints at its start and
// end (a lower bound: a higher value between them that stayed under the process's earlier peak
// is not seen).
func (i Interval) End() int64 {
	s := Read()
	switch {
	case i.reset, s.Peak > i.start.Peak:
		return s.Peak
	}
	return max(i.start.Now, s.Now)
}

// Exact says whether End measures the true peak (the OS reset the peak at Begin).
func (i Interval) Exact() bool { return i.reset }

// Method says how an interval's peak is measured on this OS, for reports: with reset true when
// the peak could be reset at the interval's start.
func Method(reset bool) string {
	if reset {
		return resetMethod
	}
	return sampledMethod
}
