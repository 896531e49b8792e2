// msl_rt.h - CPU execution runtime for MSL compute kernels (kernels/emu).
// One threadgroup at a time per worker OS thread; each GPU thread of the group
// is a fiber (own stack, hand-written x86-64 context switch). Barriers and
// SIMD-group operations are cooperative sync points resolved by a scheduler.
// Adapted from the team's prototype (/work/shared/reference/msl-emu.md, appendix B).
#pragma once
#if !defined(__x86_64__)
#error "msl_rt.h: the fiber context switch is written for x86-64 only"
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>
#include <atomic>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

namespace msl_rt {
using u32 = uint32_t;
struct U3 { u32 x = 1, y = 1, z = 1; };
enum State : uint8_t { RUNNABLE, WAIT_TG, WAIT_SIMD, DONE };

struct SimdState {                       // per SIMD-group exchange area, 2 banks
  alignas(64) unsigned char slot[2][32][64];
  float A[2][64], B[2][64], C[2][64];    // simdgroup_matrix operands (row-major 8x8)
  float D[2][64];                        // the product, computed once by the first lane to resume
  u32 d_op[2];                           // which operation (fiber epoch) D holds
  u32 mask[2];                           // lanes that took part in the last op on a bank
};
struct Launch;
struct Group;
struct Fiber {
  void* sp; State st; u32 tindex, simd_id, lane, epoch; U3 lid; Group* grp; char* stack;
};
struct Group { Launch* L; U3 gid, tg; u32 n, nsimd; Fiber* f; SimdState* simd; void* tgmem[8]; std::vector<void*>* poisoned; };  // tg: this group's size
struct Launch {
  U3 groups, tg;                  // dispatchThreadgroups(groups, threadsPerThreadgroup: tg)
  bool nonuniform = false;        // dispatchThreads: edge groups shrink so the grid is exactly `threads`
  U3 threads;                     // the grid in threads when nonuniform
  void* buffers[31] = {};         // [[buffer(i)]]
  size_t tg_len[8] = {};          // setThreadgroupMemoryLength(len, index: i)
  void (*fn)(void*) = nullptr; void* ctx = nullptr;   // calls the kernel
  int workers = 1;                // OS threads running groups (0 = hardware_concurrency)
  size_t stack_size = 64 << 10;
  int order = 0;                  // 0 forward, 1 reverse, 2 pseudo-random fiber order per pass
  unsigned char tg_poison = 0xFF; // fill for [[threadgroup(i)]] memory (0xFF.. = NaN)
};

inline thread_local Fiber* cur = nullptr;

// fail reports a kernel-level error the emulator detects (divergent SIMD-group operations, an MMA
// with inactive lanes) and stops the process: a fiber cannot unwind through the scheduler.
[[noreturn]] inline void fail(const char* what) {
  fprintf(stderr, "msl-emu: %s (kernels/emu runtime; the kernel would be wrong on a GPU too)\n", what);
  fflush(stderr);
  abort();
}
inline thread_local void* sched_sp = nullptr;

// swap(save_sp_here, new_sp): callee-saved registers on the stack. MXCSR / x87 control word
// are not switched: all fibers of a worker share one FP environment.
__attribute__((naked, noinline)) static void ctx_switch(void** /*from*/, void* /*to*/) {
  asm volatile(
      "pushq %rbp\n pushq %rbx\n pushq %r12\n pushq %r13\n pushq %r14\n pushq %r15\n"
      "movq %rsp, (%rdi)\n movq %rsi, %rsp\n"
      "popq %r15\n popq %r14\n popq %r13\n popq %r12\n popq %rbx\n popq %rbp\n ret\n");
}
inline void yield(State s) {
  Fiber* f = cur; f->st = s;
  asm volatile("" ::: "memory");
  ctx_switch(&f->sp, sched_sp);
  asm volatile("" ::: "memory");
}
[[noreturn]] static void fiber_entry() {
  Fiber* f = cur;
  f->grp->L->fn(f->grp->L->ctx);
  f = cur; f->st = DONE;
  ctx_switch(&f->sp, sched_sp);
  __builtin_trap();
}
inline void init_fiber(Fiber& f, size_t ss) {
  uint64_t* sp = (uint64_t*)(((uintptr_t)f.stack + ss) & ~(uintptr_t)15);
  *--sp = 0;                              // fake return address of fiber_entry
  *--sp = (uint64_t)(uintptr_t)&fiber_entry;
  for (int i = 0; i < 6; i++) *--sp = 0;  // rbp rbx r12-r15
  f.sp = sp;
}

// stack_pool returns count fiber stacks of ss bytes each for this OS thread, reused from one
// dispatch to the next (fresh stacks for every dispatch cost a page fault per page touched). The
// lowest page of every stack is inaccessible, and a spare stack sits below the first, so a kernel
// that overflows its stack faults instead of overwriting another thread's stack.
inline char* stack_pool(size_t count, size_t ss) {
  static thread_local char* pool = nullptr;
  static thread_local size_t len = 0;
  size_t n = (count + 1) * ss;
  if (len < n) {
    if (pool) munmap(pool, len);
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail("cannot map fiber stacks");
    pool = (char*)p; len = n;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i <= count; i++) mprotect(pool + i * ss, page, PROT_NONE);
  }
  return pool + ss;
}

struct Worker {
  Launch& L; std::vector<Fiber> fib; char* stacks; std::vector<SimdState> simd;
  std::vector<std::vector<unsigned char>> tg; std::vector<u32> ord; u32 rng = 12345;
  std::vector<void*> poisoned;  // function-scope threadgroup objects already filled in this group
  explicit Worker(Launch& l) : L(l) {
    u32 n = L.tg.x * L.tg.y * L.tg.z;
    fib.resize(n); stacks = stack_pool(n, L.stack_size); simd.resize((n + 31) / 32);
    for (int i = 0; i < 8; i++) tg.emplace_back(L.tg_len[i]);
    for (u32 i = 0; i < n; i++) ord.push_back(i);
  }
  void run_group(U3 gid) {
    poisoned.clear();
    for (SimdState& s : simd) s.d_op[0] = s.d_op[1] = 0;  // fiber epochs restart at 0 in every group
    U3 t = L.tg;  // dispatchThreads: a group at the grid's edge has only the threads inside it
    if (L.nonuniform) {
      t.x = std::min(L.tg.x, L.threads.x - gid.x * L.tg.x);
      t.y = std::min(L.tg.y, L.threads.y - gid.y * L.tg.y);
      t.z = std::min(L.tg.z, L.threads.z - gid.z * L.tg.z);
    }
    u32 n = t.x * t.y * t.z;
    Group g{&L, gid, t, n, (n + 31) / 32, fib.data(), simd.data(), {}, &poisoned};
    for (int i = 0; i < 8; i++) {
      if (L.tg_len[i]) memset(tg[i].data(), L.tg_poison, L.tg_len[i]);
      g.tgmem[i] = tg[i].data();
    }
    for (u32 i = 0; i < g.n; i++) {
      Fiber& f = fib[i];
      f.stack = &stacks[i * L.stack_size]; f.grp = &g; f.tindex = i; f.simd_id = i / 32;
      f.lane = i % 32; f.epoch = 0; f.st = RUNNABLE;
      f.lid = U3{i % t.x, (i / t.x) % t.y, i / (t.x * t.y)};
      init_fiber(f, L.stack_size - (i % 61) * 64);  // stagger stack tops: avoid cache-set aliasing
    }
    u32 alive = g.n;
    while (alive) {
      if (L.order == 2) {
        for (u32 k = 0; k < g.n; k++) ord[k] = k;
        for (u32 k = g.n - 1; k > 0; k--) { rng = rng * 1103515245u + 12345u; std::swap(ord[k], ord[(rng >> 8) % (k + 1)]); }
      }
      for (u32 k = 0; k < g.n; k++) {              // one pass: run every runnable fiber to its next sync
        Fiber& f = fib[L.order == 0 ? k : L.order == 1 ? g.n - 1 - k : ord[k]];
        if (f.st != RUNNABLE) continue;
        cur = &f; ctx_switch(&sched_sp, f.sp);
        if (f.st == DONE) alive--;
      }
      if (!alive) break;
      bool released = false;                       // SIMD-group syncs first (active = waiting lanes)
      for (u32 s = 0; s < g.nsimd; s++) {
        u32 mask = 0, ep = ~0u; bool bad = false;
        for (u32 l = 0; l < 32 && s * 32 + l < g.n; l++) {
          Fiber& f = fib[s * 32 + l];
          if (f.st != WAIT_SIMD) continue;
          mask |= 1u << l;
          if (ep != ~0u && ep != f.epoch) bad = true;
          ep = f.epoch;
        }
        if (!mask) continue;
        if (bad) fail("divergent SIMD-group operations: lanes of one simdgroup reached different SIMD ops");
        simd[s].mask[(ep - 1) & 1] = mask;
        for (u32 l = 0; l < 32; l++) if (mask >> l & 1) fib[s * 32 + l].st = RUNNABLE;
        released = true;
      }
      if (released) continue;
      for (u32 i = 0; i < g.n; i++) if (fib[i].st == WAIT_TG) fib[i].st = RUNNABLE;  // all live threads at a barrier
    }
  }
};

inline void dispatch(Launch& L) {
  u32 total = L.groups.x * L.groups.y * L.groups.z;
  std::atomic<u32> next{0};
  auto work = [&] {
    Worker w(L);
    for (u32 i; (i = next.fetch_add(1)) < total;)
      w.run_group(U3{i % L.groups.x, (i / L.groups.x) % L.groups.y, i / (L.groups.x * L.groups.y)});
  };
  int nw = L.workers > 0 ? L.workers : (int)std::thread::hardware_concurrency();
  if (nw > (int)total) nw = (int)total;
  std::vector<std::thread> ts;
  for (int i = 1; i < nw; i++) ts.emplace_back(work);
  work();
  for (auto& t : ts) t.join();
}
template <class F> void dispatch(Launch& L, F&& f) {
  L.fn = [](void* c) { (*(F*)c)(); }; L.ctx = (void*)&f; dispatch(L);
}

// tg_poison fills a function-scope threadgroup object with the poison byte the first time a thread
// of the current group reaches its declaration (the pre-pass inserts the call), so reads of
// threadgroup memory that no thread of this group wrote yield NaN instead of a previous group's data.
inline void tg_poison(void* p, size_t n) {
  Group* g = cur->grp;
  for (void* q : *g->poisoned) if (q == p) return;
  g->poisoned->push_back(p);
  memset(p, g->L->tg_poison, n);
}

// ---- kernel-argument binding via default arguments (see metal_stdlib) ----
inline constexpr int z[1] = {0};
struct BufArg {
  void* p;
  BufArg operator[](int) const { return *this; }
  template <class T> operator T*() const { return (T*)p; }
  template <class T, class = std::enable_if_t<!std::is_pointer_v<T>>> operator T&() const { return *(T*)p; }
};
inline BufArg arg_buffer(int i) { return {cur->grp->L->buffers[i]}; }
inline BufArg arg_tgmem(int i) { return {cur->grp->tgmem[i]}; }
struct Builtin {
  U3 v;
  Builtin operator[](int) const { return *this; }
  template <class T> operator T() const {
    if constexpr (std::is_arithmetic_v<T>) return (T)v.x;
    else { T r{}; r[0] = v.x; if constexpr (sizeof(T) / sizeof(r[0]) > 1) r[1] = v.y;
           if constexpr (sizeof(T) / sizeof(r[0]) > 2) r[2] = v.z; return r; }
  }
};
inline U3 mul(U3 a, U3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
inline Builtin b_lid() { return {cur->lid}; }
inline Builtin b_tgid() { return {cur->grp->gid}; }
inline Builtin b_tptg() { return {cur->grp->tg}; }
inline Builtin b_tgpg() { return {cur->grp->L->groups}; }
inline Builtin b_tpg() { return {cur->grp->L->nonuniform ? cur->grp->L->threads : mul(cur->grp->L->groups, cur->grp->L->tg)}; }
inline Builtin b_gid() { U3 g = cur->grp->gid, t = cur->grp->L->tg, l = cur->lid;
  return {{g.x * t.x + l.x, g.y * t.y + l.y, g.z * t.z + l.z}}; }
inline Builtin b_s(u32 x) { return {{x, 0, 0}}; }
}  // namespace msl_rt
