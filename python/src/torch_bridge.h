// The C interface through which boo's PyTorch library (torch_ops.cpp, built against the user's
// PyTorch) reaches the runtime inside boo._C (module.cpp). C types only: the two are built with
// different C++ runtimes (boo._C carries its own, hidden; the PyTorch library uses PyTorch's), so no
// C++ object crosses. boo._C owns one runtime per GPU for both, so kernels compiled by the Python side
// (the compile backends check every candidate) are the ones the C++ ops launch.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BOO_TORCH_BRIDGE_VERSION 3
#define BOO_TORCH_MAX_RANK 8

// A failed call's boo StatusCode (never 0) and message.
typedef struct boo_bridge_status {
  int32_t code;
  char message[1024];
} boo_bridge_status;

// One tensor of a signature: its name (the launchable's role: "x", "dw", ...), logical shape, strides in
// elements and dtype (0 float32, 1 float16, 2 bfloat16).
typedef struct boo_bridge_tensor {
  char name[32];
  int32_t rank;
  int32_t dtype;
  int64_t shape[BOO_TORCH_MAX_RANK];
  int64_t strides[BOO_TORCH_MAX_RANK];
} boo_bridge_tensor;

// A convolution as boo.ops.conv_signature builds it: rank 3 to 5 (x and w), one stride, padding and
// dilation per spatial dimension, layouts as in the op's "input,kernel,output" string, direction a
// bit set of boo::ConvDirection, activation in boo's spelling ("none", "leaky_relu:0.2", ...); tf32: a float32
// conv on TF32 tensor cores (--fp32-math tf32), as PyTorch's torch.backends.cudnn.allow_tf32 asks.
typedef struct boo_bridge_conv {
  int32_t rank;
  int32_t dtype;
  int64_t x_shape[5];
  int64_t w_shape[5];
  int64_t stride[3], padding[3], dilation[3];
  int64_t groups;
  char layouts[3][8];
  uint8_t directions;
  uint8_t bias;
  uint8_t tf32;
  char activation[64];
} boo_bridge_conv;

// A batch norm as boo.ops.batch_norm_signature builds it (one statistic per channel, float32 scale, bias
// and statistics): x of rank 4 or 5 in `layout` (NCHW, NHWC, NCDHW, NDHWC), pass_ a boo::BatchNormPass
// (1 training, 2 inference, 3 backward), with save and running as in boo::BatchNormSignature.
typedef struct boo_bridge_batch_norm {
  int32_t rank;
  int32_t dtype;
  int64_t x_shape[5];
  char layout[8];
  uint8_t pass_;
  uint8_t save;
  uint8_t running;
  double eps;
  double momentum;
} boo_bridge_batch_norm;

// A signature made ready on one GPU: its launchable (owned by boo._C, alive for the process), its
// tensors and the workspace bytes a launch needs. Pointers stay valid for the process.
typedef struct boo_bridge_launchable {
  void* handle;
  int32_t argument_count, result_count;
  const boo_bridge_tensor* arguments;
  const boo_bridge_tensor* results;
  uint64_t workspace_bytes;
  const char* name;  // the signature's canonical command, for messages
} boo_bridge_launchable;

typedef struct boo_bridge {
  uint32_t version;  // BOO_TORCH_BRIDGE_VERSION
  // Whether `stream` (a CUstream; 0 the legacy default stream) of GPU `device` is being captured into a
  // CUDA graph. Returns 0, or a StatusCode with `status` filled.
  int32_t (*stream_capturing)(int32_t device, void* stream, int32_t* capturing, boo_bridge_status* status);
  // The launchable of a convolution on GPU `device`: planned, compiled or loaded now, unless
  // `loaded_only`, when only one this process loaded already is returned (FAILED_PRECONDITION
  // otherwise: what a CUDA graph capture asks for). Returns 0, or a StatusCode (boo declines the
  // signature, a kernel does not compile, ...) with `status` filled.
  int32_t (*conv)(const boo_bridge_conv* conv, int32_t device, int32_t loaded_only, boo_bridge_launchable* out,
                  boo_bridge_status* status);
  // Launches `handle` on `stream` (0: the legacy default stream) over device addresses in the order of
  // its arguments and results (shapes, dtypes and strides as given: the caller has checked them, and
  // each is 16-byte aligned), with `workspace` (workspace_bytes of 256-byte aligned device memory, or
  // null when that is 0). Allocates and synchronizes nothing. Returns 0, or a StatusCode.
  int32_t (*launch)(void* handle, const uint64_t* arguments, const uint64_t* results, void* workspace, void* stream,
                    boo_bridge_status* status);
  // The launchable of a batch norm on GPU `device`, as `conv` does for a convolution.
  int32_t (*batch_norm)(const boo_bridge_batch_norm* batch_norm, int32_t device, int32_t loaded_only,
                        boo_bridge_launchable* out, boo_bridge_status* status);
} boo_bridge;

#ifdef __cplusplus
}
#endif
