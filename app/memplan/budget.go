package memplan

import "easel/app/settings"

// DeviceBudget is what a backend may use: physical memory on the CPU backend; on Apple silicon's
// GPU, Metal's recommendedMaxWorkingSetSize, which is about three quarters of unified memory —
// estimated so here until the Metal backend reports its own figure (the pipeline's ledger then
// gives the live number).
func DeviceBudget(b settings.Backend) int64 {
	phys := PhysicalMemory()
	if b == settings.BackendCPU || !hasMetal {
		return phys
	}
	return phys / 4 * 3
}
