// boo device code: Hopper (sm_90a) primitives as PTX — warpgroup tensor-core
// GEMMs (wgmma), their shared-memory matrix descriptors, mbarriers, TMA
// copies, the async proxy fence, named barriers and register reallocation
// between warpgroups.
// NVRTC-clean: includes nothing. Every function here needs the sm_90a target
// (wgmma and setmaxnreg do not exist on plain sm_90).
#pragma once

namespace boo {
namespace sm90 {

/// The 32-bit shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---------------------------------------------------------------------------
// Shared-memory matrix descriptors.
//
// wgmma reads its shared-memory operands through a 64-bit descriptor: the
// start address, two strides and a swizzle mode. Every operand here lies in
// 128-byte rows in the 128-byte swizzle: rows are 128 bytes apart, and in row
// r the 16-byte chunk j lies at chunk position j ^ (r % 8). Eight rows form a
// 1024-byte swizzle atom. A tile must start 1024-byte aligned so that the
// hardware's swizzle (a function of the address bits) matches the one the
// writer applied.
//
// K-major (imm-trans 0; the forward faces): a row holds 64 16-bit elements of
// K of one M (or N) index; atoms follow one another along M (or N), 1024
// bytes apart (the stride byte offset). The leading byte offset is unused in
// this mode (one wgmma's 16 elements of K lie inside a row) and is set to 1
// by convention. The k-th 16-element slice of K starts 32*k bytes into the
// tile, swizzled by the same address bits.
//
// M- or N-major (imm-trans 1; the weight face, whose operands are contiguous
// along M and N, not K): a row holds 64 16-bit elements of M (or N) of one K
// index; an atom is 8 K indices x 64 of M (or N). The stride byte offset is
// the distance between atoms along K (8 K rows: 1024 bytes when K rows are
// consecutive), the leading byte offset the distance between atoms along M (or
// N), each 64 wide. One wgmma's 16 elements of K are two atoms along K; the
// k-th slice starts 2048*k bytes into a tile of consecutive K rows, on an atom
// boundary. Because the swizzle follows the address bits, an M/N-major
// operand may also start any whole number of rows into such a tile (the base
// offset field stays 0), and its atoms along M/N may overlap: a leading byte
// offset of 128 makes atom j the same rows read j rows later. The weight
// face's shifted taps read one copy of x's pixel rows so, one tap per atom
// (conv_wgmma_weight_taps.cuh). Both measured exact on an H100 (2026-11-28,
// every shift 0-7, atoms at 128-byte offsets; a base offset of
// (address >> 7) & 7 instead read wrong rows).
// ---------------------------------------------------------------------------

constexpr unsigned kSwizzleRowBytes = 128;   ///< one row of a 128-byte-swizzled K-major tile
constexpr unsigned kSwizzleAtomBytes = 1024; ///< eight such rows: the swizzle's period

/// Byte offset, within a 128-byte-swizzled tile (either major-ness), of the 16-byte chunk `chunk` (0-7) of row `row`.
__device__ __forceinline__ unsigned swizzle128_offset(unsigned row, unsigned chunk) {
  return row * kSwizzleRowBytes + ((chunk ^ (row & 7u)) << 4);
}

/// The descriptor of a 128-byte-swizzled K-major operand whose (sliced) start
/// is the shared-memory address `address`.
__device__ __forceinline__ unsigned long long swizzle128_descriptor(unsigned address) {
  const unsigned long long start = (address & 0x3FFFFu) >> 4;          // bits 0-13
  const unsigned long long leading = 1ull;                             // bits 16-29: unused here
  const unsigned long long stride = kSwizzleAtomBytes >> 4;            // bits 32-45
  const unsigned long long layout = 1ull;                              // bits 62-63: 1 = 128-byte swizzle
  return start | (leading << 16) | (stride << 32) | (layout << 62);
}

/// The descriptor of a 128-byte-swizzled M- or N-major operand (wgmma with
/// imm-trans 1) whose K rows are consecutive from the shared-memory address
/// `address` and whose 64-wide atom columns along M (or N) lie
/// `column_bytes` apart.
__device__ __forceinline__ unsigned long long swizzle128_mn_descriptor(unsigned address, unsigned column_bytes) {
  const unsigned long long start = (address & 0x3FFFFu) >> 4;          // bits 0-13
  const unsigned long long leading = (column_bytes & 0x3FFFFu) >> 4;   // bits 16-29: between atoms along M/N
  const unsigned long long stride = kSwizzleAtomBytes >> 4;            // bits 32-45: between atoms along K
  const unsigned long long layout = 1ull;                              // bits 62-63: 1 = 128-byte swizzle
  return start | (leading << 16) | (stride << 32) | (layout << 62);
}

// ---------------------------------------------------------------------------
// wgmma: one warpgroup (four consecutive warps, the first a multiple of four)
// multiplies a 64 x K tile of A by a K x N tile of B into 64 x N fp32
// accumulators spread over its 128 threads. K is 32 bytes of the type: 16
// bf16/fp16 elements, or 8 fp32 ones read as TF32 (the tensor cores use each
// value's upper 19 bits), so a k-th slice starts 32*k bytes into a K-major
// tile for every type. Thread t of warp w holds, for each block j of 8
// columns, d[4j + q] = D(16w + t/4 + 8*(q/2), 8j + 2*(t%4) + q%2).
// kTransA / kTransB (imm-trans-a/b) = 1 read A as M-major and B as N-major
// (the descriptors' layout above), 0 K-major; 16-bit types only (TF32 reads
// both operands K-major).
// The instruction is asynchronous: fence before the first one that touches
// accumulators written by ordinary code, commit a group after issuing, and
// wait for the group before the accumulators or the shared memory it reads
// are touched again.
// ---------------------------------------------------------------------------

enum WgmmaType : int { kWgmmaBf16 = 0, kWgmmaF16 = 1, kWgmmaTf32 = 2 };

template <int N, int kType>
struct Wgmma;

// The forms' asm operands: the N / 2 accumulators first (%0 ...; BOO_WGMMA_D8(i) binds d[i] ... d[i + 7],
// BOO_WGMMA_R0 ... BOO_WGMMA_R96 name them 32 at a time), then desc_a, desc_b, scale_d and the two
// transpose immediates.
#define BOO_WGMMA_D8(i)                                                                                    \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define BOO_WGMMA_D32(i) BOO_WGMMA_D8(i), BOO_WGMMA_D8(i + 8), BOO_WGMMA_D8(i + 16), BOO_WGMMA_D8(i + 24)
#define BOO_WGMMA_D64(i) BOO_WGMMA_D32(i), BOO_WGMMA_D32(i + 32)
#define BOO_WGMMA_D96(i) BOO_WGMMA_D64(i), BOO_WGMMA_D32(i + 64)
#define BOO_WGMMA_D128(i) BOO_WGMMA_D64(i), BOO_WGMMA_D64(i + 64)
#define BOO_WGMMA_R0 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define BOO_WGMMA_R32 \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define BOO_WGMMA_R64 \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define BOO_WGMMA_R96 \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

/// One form: D(64xN, f32) (+)= A(64xK, PTX_TYPE, shared) * B(KxN, PTX_TYPE, shared); scale_d 0 overwrites
/// D. REGS names the N / 2 accumulators and DLIST(0) binds them (DLIST: a BOO_WGMMA_D* macro's name, so that
/// its commas pass through BOO_WGMMA_FORMS whole); SCALE is scale_d's operand, DESCS the descriptors', TRANS
/// the transpose immediates' (with its comma; empty for TF32, which has none).
#define BOO_WGMMA_FORM(N, TYPE, PTX_TYPE, K, REGS, DLIST, SCALE, DESCS, TRANS)                               \
  template <>                                                                                              \
  struct Wgmma<N, TYPE> {                                                                                  \
    template <int kTransA = 0, int kTransB = 0>                                                            \
    __device__ __forceinline__ static void mma(float (&d)[N / 2], unsigned long long desc_a,               \
                                               unsigned long long desc_b, int scale_d) {                   \
      static_assert(TYPE != kWgmmaTf32 || (kTransA == 0 && kTransB == 0), "TF32 reads K-major operands"); \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                                     \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k" #K ".f32." PTX_TYPE "." PTX_TYPE " {" REGS   \
                   "}, " DESCS ", p, 1, 1" TRANS ";\n}\n"                                                  \
                   : DLIST(0)                                                                              \
                   : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransA), "n"(kTransB));                  \
    }                                                                                                      \
  }

/// A width's bf16, fp16 and TF32 (k8, no transpose immediates) forms.
#define BOO_WGMMA_FORMS(N, REGS, DLIST, SCALE, DESCS, TRANS)                 \
  BOO_WGMMA_FORM(N, kWgmmaBf16, "bf16", 16, REGS, DLIST, SCALE, DESCS, TRANS); \
  BOO_WGMMA_FORM(N, kWgmmaF16, "f16", 16, REGS, DLIST, SCALE, DESCS, TRANS);   \
  BOO_WGMMA_FORM(N, kWgmmaTf32, "tf32", 8, REGS, DLIST, SCALE, DESCS, "")

#define BOO_WGMMA_R128 BOO_WGMMA_R0 ", " BOO_WGMMA_R32
#define BOO_WGMMA_R192 BOO_WGMMA_R128 ", " BOO_WGMMA_R64
#define BOO_WGMMA_R256 BOO_WGMMA_R192 ", " BOO_WGMMA_R96
BOO_WGMMA_FORMS(64, BOO_WGMMA_R0, BOO_WGMMA_D32, "%34", "%32, %33", ", %35, %36");
BOO_WGMMA_FORMS(128, BOO_WGMMA_R128, BOO_WGMMA_D64, "%66", "%64, %65", ", %67, %68");
BOO_WGMMA_FORMS(192, BOO_WGMMA_R192, BOO_WGMMA_D96, "%98", "%96, %97", ", %99, %100");
BOO_WGMMA_FORMS(256, BOO_WGMMA_R256, BOO_WGMMA_D128, "%130", "%128, %129", ", %131, %132");

/// Orders this warpgroup's earlier register and shared-memory accesses before its next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

/// Closes the group of wgmma issued since the last commit.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

/// Waits until at most kPending committed wgmma groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// Keeps the compiler from moving reads or writes of `v` across this point:
/// the accumulators of an asynchronous wgmma are valid only after its wait.
__device__ __forceinline__ void pin_register(float& v) { asm volatile("" : "+f"(v)::"memory"); }

// ---------------------------------------------------------------------------
// mbarriers (64-bit objects in shared memory). A barrier completes a phase
// when its expected arrivals (the count given at init) have arrived and its
// expected transaction bytes, if any, have landed; the phases alternate
// parity 0, 1, 0, ... Waiting on parity P returns once the phase of parity P
// has completed: on a fresh barrier, waiting on parity 1 returns at once.
// ---------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
}

/// Makes initialized barriers visible to the async proxy (the copy engine) as well.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// One arrival (release semantics: this thread's earlier writes are visible to whoever waits).
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

/// One arrival, made by the hardware once every cp.async this thread issued
/// before it has landed (noinc: it is one of the arrivals the barrier was
/// initialized to expect), so the thread goes on issuing copies meanwhile.
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(unsigned long long* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

/// Waits until every cp.async this thread issued has landed, committed to a group or not.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/// One arrival that also expects `bytes` more transaction bytes in the current phase (for bulk copies).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}

/// Expects `bytes` more transaction bytes in the barrier's current phase
/// without arriving: the phase completes once its arrivals are in and the
/// bytes have landed. For a thread whose own arrival comes later (a producer
/// that also issues cp.async and announces the stage with the others).
__device__ __forceinline__ void mbarrier_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

/// Whether the phase of parity `parity` has completed (acquire semantics when it has).
__device__ __forceinline__ bool mbarrier_try_wait(unsigned long long* bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

/// Blocks until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

/// Orders this thread's earlier shared-memory accesses through the generic
/// proxy (ordinary stores, cp.async) before later accesses through the async
/// proxy (wgmma operands, bulk copies): needed between writing an operand tile
/// with ordinary copies and the wgmma that reads it.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---------------------------------------------------------------------------
// TMA (the copy engine's tensor copies). A tensor map (CUtensorMap, encoded
// on the host) describes a tensor in global memory, the box one copy moves and
// the shared-memory swizzle; the copy writes the box's elements row after row
// (the first dim fastest) from the shared-memory address on, zeros for the
// elements outside the tensor, through the async proxy (no fence before the
// wgmma that read them), and signals the bytes it wrote on an mbarrier
// (complete_tx): the whole box's bytes, out-of-bounds zeros included. `map` is
// the map's generic address (a __grid_constant__ kernel parameter's).
// ---------------------------------------------------------------------------

/// Fetches the tensor map at `map` into the copy engine's cache ahead of its first use.
__device__ __forceinline__ void prefetch_tensor_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

/// Copies the 2-D box at coordinates (c0, c1) (elements along the map's
/// first and second dims) to the shared-memory address `dst` (aligned as the
/// map's swizzle needs: 1024 bytes for the 128-byte swizzle), its bytes
/// signalled on `bar`. The CTA's own shared memory is a valid shared::cluster
/// address.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* map, int c0, int c1, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(shared_address(bar))
      : "memory");
}

/// Copies the 3-D box at coordinates (c0, c1, c2) (elements along the map's
/// dims, the first contiguous; past the extent read as zeros) to `dst`, as
/// tma_load_2d.
__device__ __forceinline__ void tma_load_3d(unsigned dst, const void* map, int c0, int c1, int c2,
                                            unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(shared_address(bar))
      : "memory");
}

/// Copies the 4-D box at coordinates (c0, c1, c2, c3) (elements along the
/// map's dims, the first contiguous; negative or past the extent read as
/// zeros) to `dst`, as tma_load_2d: the box's elements in its dims' order,
/// the first dim's as 128-byte rows when the map swizzles them.
__device__ __forceinline__ void tma_load_4d(unsigned dst, const void* map, int c0, int c1, int c2, int c3,
                                            unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(shared_address(bar))
      : "memory");
}

/// Copies pixels_per_column pixels x channels_per_pixel channels through a
/// 4-D im2col map {C, W, H, N} (cuTensorMapEncodeIm2col) to `dst`: channels
/// c ... of the pixels that start at (w, h) of image n and walk W, then H,
/// then N, by the map's element strides inside its bounding box, each read at
/// (w + off_w, h + off_h) (zeros outside the image), a pixel's channels one
/// shared-memory row; its bytes signalled on `bar`.
__device__ __forceinline__ void tma_load_im2col_4d(unsigned dst, const void* map, int c, int w, int h, int n,
                                                   unsigned short off_w, unsigned short off_h,
                                                   unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6], {%7, %8};\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(shared_address(bar)),
      "h"(off_w), "h"(off_h)
      : "memory");
}

/// Copies the 3-D box at `src` (shared memory, laid out and aligned as for
/// tma_load_2d) to coordinates (c0, c1, c2) of the map's tensor, skipping the
/// elements outside it, as one bulk async-group of this thread's (commit it
/// with bulk_commit_group). The writes that filled `src` must be ordered
/// before it through the async proxy (fence_proxy_async_shared, then a barrier).
__device__ __forceinline__ void tma_store_3d(const void* map, unsigned src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<unsigned long long>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(src)
               : "memory");
}

/// Closes this thread's bulk copies issued since the last commit into one bulk async-group.
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

/// Waits until at most kPending of this thread's bulk async-groups still read
/// their shared-memory source (which may then be overwritten).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

/// Waits until at most kPending of this thread's bulk async-groups are incomplete (their writes done).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Synchronizes kThreads threads (a multiple of 32) on hardware barrier kId
/// (1-15; 0 is __syncthreads's). Constant ids let the compiler count the
/// barriers a kernel uses.
template <int kId, int kThreads>
__device__ __forceinline__ void named_barrier_sync() {
  static_assert(kId >= 1 && kId <= 15 && kThreads % 32 == 0, "barrier 1-15, whole warps");
  asm volatile("bar.sync %0, %1;\n" ::"n"(kId), "n"(kThreads) : "memory");
}

/// Raises (or lowers) this warpgroup's registers per thread to kRegisters (a
/// multiple of 8 in 24-256). Takes effect only in a kernel launched with a
/// register cap (__launch_bounds__(threads, 1)); the warpgroups that lower
/// theirs give the registers that the others raise theirs with.
template <int kRegisters>
__device__ __forceinline__ void raise_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void lower_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

}  // namespace sm90
}  // namespace boo
