// msl_emu_entry.h - the C ABI of a compiled kernels/emu library (a shared object that the Go
// package kernels/emu loads with dlopen). The generated translation unit defines msl_emu_kernels,
// the table of the file's kernels by their Metal names; this header exports two functions:
//   const char* msl_emu_kernel_name(int i)   the i-th kernel name, NULL past the end
//   int msl_emu_run(const char* name, const msl_emu_launch* l)
//                                            runs one dispatchThreadgroups; 0 = done, -1 = no such kernel
#pragma once
#include <stdint.h>
#include <string.h>

extern "C" {
// Keep in sync with C.msl_emu_launch in kernels/emu/dl.go.
typedef struct msl_emu_launch {
  uint32_t groups[3];   // threadgroups per grid (x, y, z)
  uint32_t tg[3];       // threads per threadgroup (x, y, z)
  void* buffers[31];    // [[buffer(i)]]: base address + offset, or NULL
  uint64_t tg_len[8];   // [[threadgroup(i)]] lengths in bytes
  int32_t workers;      // OS threads that run threadgroups
  int32_t order;        // fiber order per scheduling pass: 0 forward, 1 reverse, 2 shuffled
  uint32_t threads[3];  // dispatchThreads: the grid in threads (edge groups shrink)
  int32_t nonuniform;   // 1 for dispatchThreads, 0 for dispatchThreadgroups
} msl_emu_launch;
}

namespace msl_rt {
struct KernelEntry { const char* name; void (*fn)(); };
}
extern const msl_rt::KernelEntry msl_emu_kernels[];

extern "C" __attribute__((visibility("default"))) const char* msl_emu_kernel_name(int i) {
  for (int k = 0; msl_emu_kernels[k].name; k++)
    if (k == i) return msl_emu_kernels[k].name;
  return nullptr;
}

extern "C" __attribute__((visibility("default"))) int msl_emu_run(const char* name, const msl_emu_launch* l) {
  void (*fn)() = nullptr;
  for (int k = 0; msl_emu_kernels[k].name; k++)
    if (strcmp(msl_emu_kernels[k].name, name) == 0) fn = msl_emu_kernels[k].fn;
  if (!fn) return -1;
  msl_rt::Launch L;
  L.groups = {l->groups[0], l->groups[1], l->groups[2]};
  L.tg = {l->tg[0], l->tg[1], l->tg[2]};
  for (int i = 0; i < 31; i++) L.buffers[i] = l->buffers[i];
  for (int i = 0; i < 8; i++) L.tg_len[i] = (size_t)l->tg_len[i];
  L.workers = l->workers;
  L.order = l->order;
  L.nonuniform = l->nonuniform != 0;
  L.threads = {l->threads[0], l->threads[1], l->threads[2]};
  msl_rt::dispatch(L, [fn] { fn(); });
  return 0;
}
