// Package procmem reads the process's memory footprint and its peak, so each stage of a run can
// record the most memory the process held while it ran: phys_footprint and its ledger peak
// (task_info TASK_VM_INFO) on macOS, the resident set and VmHWM (/proc/self/status) on Linux,
// where the peak can be reset between stages (/proc/self/clear_refs "5") when the kernel allows.
package procmem
