//go:build darwin

package procmem

/*
#include <mach/mach.h>
#include <mach/task_info.h>
#include <stdint.h>

static int64_t easelPhysFootprint(int64_t *peak) {
	task_vm_info_data_t info;
	mach_msg_type_number_t count = TASK_VM_INFO_COUNT;
	if (task_info(mach_task_self(), TASK_VM_INFO, (task_info_t)&info, &count) != KERN_SUCCESS) {
		*peak = -1;
		return -1;
	}
	*peak = (int64_t)info.ledger_phys_footprint_peak;
	return (int64_t)info.phys_footprint;
}
*/
import "C"

const (
	resetMethod   = "phys_footprint peak, reset at each stage's start"
	sampledMethod = "phys_footprint: the process's peak (ledger_phys_footprint_peak) when the stage set it, else the larger footprint of its start and end"
)

// Read is phys_footprint and ledger_phys_footprint_peak (task_info TASK_VM_INFO); -1 where
// task_info fails.
func Read() Sample {
	var peak C.int64_t
	now := int64(C.easelPhysFootprint(&peak))
	return Sample{Now: now, Peak: int64(peak)}
}

// ResetPeak is false: macOS has no public call that resets the footprint's peak.
func ResetPeak() bool { return false }
