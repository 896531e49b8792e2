//go:build linux && amd64 && cgo

package emu

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// Keep in sync with include/msl_emu_entry.h, with one difference: the buffer addresses are
// uintptr_t here where the header has void* (the same size and layout, asserted below). Go fills
// this struct in C memory, and a Go store of a pointer-typed value runs the garbage collector's
// write barrier, which reads the slot's old value as a pointer: in malloc'd memory that is a
// stale address left by an earlier launch (a weight buffer's Go memory, since freed), and the
// collector stops the process ("found bad pointer in Go heap", "found pointer to free object").
// An integer store has no write barrier.
typedef struct msl_emu_launch {
  uint32_t groups[3];
  uint32_t tg[3];
  uintptr_t buffers[31];
  uint64_t tg_len[8];
  int32_t workers;
  int32_t order;
  uint32_t threads[3];
  int32_t nonuniform;
} msl_emu_launch;

typedef const char* (*msl_emu_name_fn)(int);
typedef int (*msl_emu_run_fn)(const char*, const msl_emu_launch*);

_Static_assert(sizeof(uintptr_t) == sizeof(void*), "msl_emu_launch.buffers: an address must fit uintptr_t");
static uint32_t msl_emu_u32(uintptr_t p) { return *(const uint32_t*)p; }
static const char* msl_emu_call_name(void* f, int i) { return ((msl_emu_name_fn)f)(i); }
static int msl_emu_call_run(void* f, const char* name, const msl_emu_launch* l) { return ((msl_emu_run_fn)f)(name, l); }
// A device buffer: zeroed pages with an inaccessible page right after them, and the data placed
// so that it ends 16-byte aligned just before that page: a kernel writing or reading past the end
// faults instead of corrupting its neighbour.
static void* msl_emu_map_guarded(size_t n, void** base, size_t* total) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t body = (n + 15) & ~(size_t)15;
  size_t data = (body + page - 1) / page * page;
  void* p = mmap(NULL, data + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if (mprotect((char*)p + data, page, PROT_NONE) != 0) { munmap(p, data + page); return NULL; }
  *base = p;
  *total = data + page;
  return (char*)p + data - body;
}
static void msl_emu_unmap(uintptr_t base, size_t total) { munmap((void*)base, total); }
static void* msl_emu_alloc(size_t n) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, n) != 0) return NULL;
  memset(p, 0, n);
  return p;
}
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"
)

// sharedObject is a loaded kernel library: its entry points and kernel names.
type sharedObject struct {
	handle  unsafe.Pointer
	run     unsafe.Pointer
	kernels []string
}

// openShared loads the shared object at path and reads its kernel table.
func openShared(path string) (*sharedObject, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := C.dlopen(cpath, C.RTLD_NOW|C.RTLD_LOCAL)
	if h == nil {
		return nil, fmt.Errorf("load the emulated kernel library %s: %s", path, C.GoString(C.dlerror()))
	}
	sym := func(name string) unsafe.Pointer {
		cname := C.CString(name)
		defer C.free(unsafe.Pointer(cname))
		return C.dlsym(h, cname)
	}
	names, run := sym("msl_emu_kernel_name"), sym("msl_emu_run")
	if names == nil || run == nil {
		return nil, fmt.Errorf("%s lacks the kernels/emu entry points: it was not built by this package; delete it", path)
	}
	so := &sharedObject{handle: h, run: run}
	for i := 0; ; i++ {
		n := C.msl_emu_call_name(names, C.int(i))
		if n == nil {
			break
		}
		so.kernels = append(so.kernels, C.GoString(n))
	}
	return so, nil
}

// cLaunchType is the Go view of the C launch block runKernel fills (for its test: the block must
// hold no pointer-typed fields).
var cLaunchType = reflect.TypeFor[C.msl_emu_launch]()

// launch is one dispatch in the form the shared object takes.
type launch struct {
	groups, threads [3]int
	// buffers are addresses of C memory, or of pinned Go memory (no-copy buffers). They are
	// uintptr, not unsafe.Pointer: a command buffer outlives the memory it bound, which is then
	// unmapped and may be reused by the Go heap, and a stale unsafe.Pointer into a Go heap span
	// makes the garbage collector stop the process ("found bad pointer in Go heap").
	buffers     [31]uintptr
	tgLen       [8]int
	workers     int
	order       FiberOrder
	nonuniform  bool   // dispatchThreads
	gridThreads [3]int // the grid in threads when nonuniform
}

// runKernel executes one dispatch of kernel in so and returns when every threadgroup is done.
func (so *sharedObject) runKernel(kernel string, l *launch) error {
	cl := (*C.msl_emu_launch)(C.malloc(C.sizeof_msl_emu_launch))
	defer C.free(unsafe.Pointer(cl))
	for i := 0; i < 3; i++ {
		cl.groups[i] = C.uint32_t(l.groups[i])
		cl.tg[i] = C.uint32_t(l.threads[i])
		cl.threads[i] = C.uint32_t(l.gridThreads[i])
	}
	cl.nonuniform = 0
	if l.nonuniform {
		cl.nonuniform = 1
	}
	for i, p := range l.buffers {
		cl.buffers[i] = C.uintptr_t(p) // an integer: no write barrier reads the malloc'd slot
	}
	for i, n := range l.tgLen {
		cl.tg_len[i] = C.uint64_t(n)
	}
	cl.workers = C.int32_t(l.workers)
	cl.order = C.int32_t(l.order)
	cname := C.CString(kernel)
	defer C.free(unsafe.Pointer(cname))
	if C.msl_emu_call_run(so.run, cname, cl) != 0 {
		return fmt.Errorf("kernel %q is not in the library", kernel)
	}
	return nil
}

// guardedMemory is a buffer's mapping: the data ends right before an inaccessible guard page.
// The base is a uintptr, not an unsafe.Pointer: a released buffer's object outlives its
// mapping (callers and command buffers still reference it), the Go heap may later map an arena
// at the freed address, and the garbage collector stops the process when a live object holds an
// unsafe.Pointer into an unallocated part of its heap ("found bad pointer in Go heap").
type guardedMemory struct {
	base  uintptr // start of the mapping
	total int     // mapping length, guard page included
}

// mapGuarded returns n zeroed bytes, 16-byte aligned, followed (after at most 15 bytes of
// padding) by a guard page, so an overrun faults.
func mapGuarded(n int) (unsafe.Pointer, guardedMemory) {
	var base unsafe.Pointer
	var total C.size_t
	p := C.msl_emu_map_guarded(C.size_t(n), &base, &total)
	return p, guardedMemory{base: uintptr(base), total: int(total)}
}

// unmap releases a mapping from mapGuarded.
func (g guardedMemory) unmap() { C.msl_emu_unmap(C.uintptr_t(g.base), C.size_t(g.total)) }

// allocC returns n zeroed, page-aligned bytes of C memory (kernels may hold pointers into it
// during a cgo call, which Go memory must not be used for).
func allocC(n int) unsafe.Pointer { return C.msl_emu_alloc(C.size_t(n)) }

// freeC releases memory from allocC.
func freeC(p unsafe.Pointer) { C.free(p) }

// cUint32 reads the uint32 at address p of C memory (a SetBytes copy the command buffer owns).
func cUint32(p uintptr) uint32 { return uint32(C.msl_emu_u32(C.uintptr_t(p))) }
