// A host-memory stand-in for libcuda, for tests on machines without a GPU
// (BOO_CUDA_DRIVER_DIR=<this library's folder>). It implements exactly the
// driver functions boo loads (cuda/driver_api.hpp) well enough for boo's host
// paths — Runtime creation, NVRTC compile and cache, module "load", workspace
// allocation, launch planning and parameter packing — to run for real:
// memory is host memory, modules and kernels are tokens, launches only count.
// Results are therefore meaningless; what a test checks is that every
// command gets through the host side without an error.
#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
int token;  // the one context, stream, module, function and event
CUresult ok() { return CUDA_SUCCESS; }
void* as_ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
}  // namespace

extern "C" {
CUresult cuInit(unsigned) { return ok(); }
CUresult cuDriverGetVersion(int* v) { *v = CUDA_VERSION; return ok(); }
CUresult cuGetErrorName(CUresult, const char** s) { *s = "CUDA_ERROR_FAKE"; return ok(); }
CUresult cuGetErrorString(CUresult, const char** s) { *s = "fake driver"; return ok(); }
// BOO_FAKE_DEVICES: how many GPUs the fake reports (default 1), for the code that spreads over them.
int device_count() {
  const char* v = std::getenv("BOO_FAKE_DEVICES");
  const int n = v ? std::atoi(v) : 1;
  return n >= 1 && n <= 16 ? n : 1;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  *d = ordinal;
  return ordinal >= 0 && ordinal < device_count() ? ok() : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuDeviceGetCount(int* count) { *count = device_count(); return ok(); }
CUresult cuDeviceGetName(char* name, int len, CUdevice) { std::snprintf(name, len, "fake H100 (tests/fake_cuda)"); return ok(); }
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute attr, CUdevice) {  // an H100 SXM's values
  switch (attr) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 << 10; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 227 << 10; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 228 << 10; break;
    default: *v = 0; break;
  }
  return ok();
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) { *bytes = size_t{80} << 30; return ok(); }
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { *c = reinterpret_cast<CUcontext>(&token); return ok(); }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return ok(); }
CUresult cuCtxSetCurrent(CUcontext) { return ok(); }
CUresult cuCtxGetCurrent(CUcontext* c) { *c = reinterpret_cast<CUcontext>(&token); return ok(); }
CUresult cuCtxSynchronize() { return ok(); }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  void* m = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  *p = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(m));
  return m ? ok() : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFree_v2(CUdeviceptr p) { std::free(as_ptr(p)); return ok(); }
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) { *free_bytes = size_t{79} << 30; *total = size_t{80} << 30; return ok(); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { std::memcpy(as_ptr(d), s, n); return ok(); }
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { std::memcpy(d, as_ptr(s), n); return ok(); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { std::memcpy(as_ptr(d), as_ptr(s), n); return ok(); }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { std::memset(as_ptr(d), v, n); return ok(); }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream) { std::memset(as_ptr(d), v, n); return ok(); }
CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  *m = reinterpret_cast<CUmodule>(&token);
  return image ? ok() : CUDA_ERROR_INVALID_IMAGE;
}
CUresult cuModuleUnload(CUmodule) { return ok(); }
CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  *f = reinterpret_cast<CUfunction>(&token);
  return name && *name ? ok() : CUDA_ERROR_NOT_FOUND;
}
CUresult cuFuncGetAttribute(int* v, CUfunction_attribute, CUfunction) { *v = 0; return ok(); }
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return ok(); }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream, void** params, void**) {
  // What a real launch would reject: an empty grid or block, more than 1024 threads or 227 KiB of shared memory.
  if (!f || !params || gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024 || shared > (227u << 10))
    return CUDA_ERROR_INVALID_VALUE;
  return ok();
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared, CUstream s, void** params) {
  // What a real cooperative launch also rejects: more blocks than the 132 SMs hold at once (by threads alone).
  const unsigned threads = bx * by * bz;
  if (threads > 0 && gx * gy * gz > 132u * (2048u / threads)) return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, nullptr);
}
CUresult cuOccupancyMaxActiveClusters(int* clusters, CUfunction f, const CUlaunchConfig* config) {
  // The 132 SMs of an H100 at one block each, in clusters of the config's size (1 without the attribute).
  if (!clusters || !f || !config) return CUDA_ERROR_INVALID_VALUE;
  unsigned size = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) size = config->attrs[i].value.clusterDim.x;
  *clusters = static_cast<int>(132 / (size ? size : 1));
  return ok();
}
CUresult cuStreamCreate(CUstream* s, unsigned) { *s = reinterpret_cast<CUstream>(&token); return ok(); }
CUresult cuStreamDestroy_v2(CUstream) { return ok(); }
CUresult cuStreamSynchronize(CUstream) { return ok(); }
CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus* s) { *s = CU_STREAM_CAPTURE_STATUS_NONE; return ok(); }
CUresult cuEventCreate(CUevent* e, unsigned) { *e = reinterpret_cast<CUevent>(&token); return ok(); }
CUresult cuEventRecord(CUevent, CUstream) { return ok(); }
CUresult cuEventSynchronize(CUevent) { return ok(); }
CUresult cuEventElapsedTime_v2(float* ms, CUevent, CUevent) { *ms = 0.001f; return ok(); }
CUresult cuEventDestroy_v2(CUevent) { return ok(); }
// A map element's bytes, for the types boo's maps use (0: another type, which the fake refuses): 16-bit data,
// and fp32 as TF32 operands (TFLOAT32) or as itself.
static uint64_t map_element_bytes(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: return 4;
    default: return 0;
  }
}
// What the real driver requires of a tiled map (cuda.h's list, for the types and modes boo uses), checked so
// that a plan's map the driver would refuse fails here too; the map's bytes are its arguments, packed, so a
// test can read them back: [0] the address, [1-5] dims, [6-9] strides, [10] boxes (8 bits less one each),
// [11] rank | type << 8 | swizzle << 16 | interleave << 24 | L2 promotion << 32 | fill << 40.
CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
  const uint64_t element = map_element_bytes(type);
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  if (!map || reinterpret_cast<uintptr_t>(map) % 64 != 0 || element == 0 || rank < 1 || rank > 5 || at % 16 != 0 ||
      interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t d = 0; d < rank; ++d) {
    if (dims[d] < 1 || dims[d] > (uint64_t{1} << 32) || box[d] < 1 || box[d] > 256 || element_strides[d] < 1 ||
        element_strides[d] > 8)
      return CUDA_ERROR_INVALID_VALUE;
    if (d > 0 && (strides[d - 1] % 16 != 0 || strides[d - 1] >= (uint64_t{1} << 40))) return CUDA_ERROR_INVALID_VALUE;
  }
  if (box[0] * element % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (swizzle == CU_TENSOR_MAP_SWIZZLE_128B && box[0] * element > 128) return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof *map);
  map->opaque[0] = at;
  for (cuuint32_t d = 0; d < rank; ++d) {
    map->opaque[1 + d] = dims[d];
    if (d > 0) map->opaque[5 + d] = strides[d - 1];
    map->opaque[10] |= uint64_t{box[d] - 1} << (8 * d);
  }
  map->opaque[11] = rank | uint64_t{type} << 8 | uint64_t{swizzle} << 16 | uint64_t{interleave} << 24 |
                    uint64_t{l2} << 32 | uint64_t{fill} << 40;
  return ok();
}
// Checks what cuda.h says the driver checks of an im2col map (ranks 3-5, corners within [-2^15, 2^15) at
// rank 3, [-128, 128) at 4, [-16, 16) at 5 and a bounding box of non-zero area, at most 256 channels a pixel
// and 1024 pixels a copy) and packs its arguments: [0] the address, [1-5] dims, [6-9] strides, [10] the
// channels and (<< 16) pixels, [11] as the tiled map's with bit 63 set, [12] the corners (a byte each, lower
// then upper, the first spatial dim lowest), [13] the element strides (a byte each).
CUresult cuTensorMapEncodeIm2col(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                 const cuuint64_t* dims, const cuuint64_t* strides, const int* lower,
                                 const int* upper, cuuint32_t channels, cuuint32_t pixels,
                                 const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
  const uint64_t element = map_element_bytes(type);
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  if (!map || reinterpret_cast<uintptr_t>(map) % 64 != 0 || element == 0 || rank < 3 || rank > 5 || at % 16 != 0 ||
      interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || channels < 1 || channels > 256 || pixels < 1 || pixels > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t d = 0; d < rank; ++d) {
    if (dims[d] < 1 || dims[d] > (uint64_t{1} << 32) || element_strides[d] < 1 || element_strides[d] > 8)
      return CUDA_ERROR_INVALID_VALUE;
    if (d > 0 && (strides[d - 1] % 16 != 0 || strides[d - 1] >= (uint64_t{1} << 40))) return CUDA_ERROR_INVALID_VALUE;
  }
  const int reach = rank == 3 ? 32768 : rank == 4 ? 128 : 16;
  for (cuuint32_t d = 0; d + 2 < rank; ++d) {
    if (lower[d] < -reach || lower[d] >= reach || upper[d] < -reach || upper[d] >= reach) return CUDA_ERROR_INVALID_VALUE;
    if (static_cast<int64_t>(dims[d + 1]) + upper[d] - lower[d] < 1) return CUDA_ERROR_INVALID_VALUE;
  }
  if (channels * element % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (swizzle == CU_TENSOR_MAP_SWIZZLE_128B && channels * element > 128) return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof *map);
  map->opaque[0] = at;
  for (cuuint32_t d = 0; d < rank; ++d) {
    map->opaque[1 + d] = dims[d];
    if (d > 0) map->opaque[5 + d] = strides[d - 1];
    map->opaque[13] |= uint64_t{element_strides[d]} << (8 * d);
  }
  for (cuuint32_t d = 0; d + 2 < rank; ++d) {
    map->opaque[12] |= uint64_t{static_cast<uint8_t>(lower[d])} << (8 * d);
    map->opaque[12] |= uint64_t{static_cast<uint8_t>(upper[d])} << (8 * d + 32);
  }
  map->opaque[10] = channels | uint64_t{pixels} << 16;
  map->opaque[11] = rank | uint64_t{type} << 8 | uint64_t{swizzle} << 16 | uint64_t{interleave} << 24 |
                    uint64_t{l2} << 32 | uint64_t{fill} << 40 | uint64_t{1} << 63;
  return ok();
}
CUresult cuGetProcAddress_v2(const char*, void** p, int, cuuint64_t, CUdriverProcAddressQueryResult* r) {
  *p = nullptr;
  if (r) *r = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
}
