// boo: encoding launch steps' tensor maps.
#include "runtime/tensor_maps.hpp"

#include <cstring>
#include <string>

#include "cuda/driver_api.hpp"

namespace boo::runtime {

Status encode_tensor_map(const TensorMapEncoders& encode, const ops::TensorMapSlot& slot, uint64_t tensor_address,
                         std::span<std::byte> params) {
  if (size_t{slot.params_offset} + sizeof(CUtensorMap) > params.size())
    return internal_error("a tensor map at byte " + std::to_string(slot.params_offset) +
                          " lies outside its parameter block of " + std::to_string(params.size()) + " bytes");
  // Plan::validate checked what the driver checks of the plan's part; the address is the launch's.
  // fp32 maps feed TF32 wgmma (Plan::validate): as TFLOAT32 the copy rounds each value to TF32 (to nearest) as
  // it lands, as cvt.rna does for the mma.sync tier. As FLOAT32 the tensor cores truncated them, which shrank
  // every sum by about 2^-10 of itself (H200, 2026-11-28: a mean error of -8e-4 at a spread of 1.4e-3 after a
  // ReLU; rounded, -1e-5, cuDNN's own errors to the digit).
  const CUtensorMapDataType type = slot.dtype == DType::kF16   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : slot.dtype == DType::kF32 ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
                                                               : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const bool im2col = slot.mode == ops::TensorMapSlot::Mode::kIm2col;
  CUtensorMap map;  // cuda.h aligns it as the driver requires
  void* const address = reinterpret_cast<void*>(tensor_address + slot.byte_offset);
  const CUtensorMapSwizzle swizzle =
      slot.swizzle == ops::TensorMapSlot::Swizzle::k128B ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
  // L2 promotion of 256 bytes: a box row is 128 bytes, its neighbours' rows follow in the next boxes.
  const CUresult r =
      im2col ? encode.im2col(&map, type, slot.rank, address, slot.dims.data(), slot.strides.data(),
                             slot.lower_corner.data(), slot.upper_corner.data(), slot.channels_per_pixel,
                             slot.pixels_per_column, slot.element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                             swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
             : encode.tiled(&map, type, slot.rank, address, slot.dims.data(), slot.strides.data(), slot.box.data(),
                            slot.element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  // The plan's part passed Plan::validate and the launch checked the tensor's alignment: a refusal is boo's bug.
  if (r != CUDA_SUCCESS) {
    const std::string call = std::string(im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled") + "(rank " +
                             std::to_string(slot.rank) + ", dims " + std::to_string(slot.dims[0]) + " x " +
                             std::to_string(slot.dims[1]) + ", box " +
                             std::to_string(im2col ? slot.channels_per_pixel : slot.box[0]) + " x " +
                             std::to_string(im2col ? slot.pixels_per_column : slot.box[1]) + ")";
    return internal_error(cuda::cu_status(r, call.c_str()).message());
  }
  std::memcpy(params.data() + slot.params_offset, &map, sizeof map);
  return ok_status();
}

}  // namespace boo::runtime
