// A stand-in for libcudnn's graph API, for testing the cudnn backend's plan
// choice without a GPU (with the fake libcuda). Descriptors store whatever
// attributes are set and give them back; finalizing always succeeds and
// executing does nothing, so results are meaningless. The heuristics offer
// kEngines engine configurations (engine i with one knob, type 3 = 10 + i).
//
// The legacy batch norm calls check nothing and compute nothing either; their
// tensor descriptors keep what is set.
//
// When FAKE_CUDNN_LOG names a file, these events are appended to it, one a line:
//   heuristics          an engine heuristics query (a plan search)
//   engine <index>      an engine built by its index (a remembered plan)
//   norm-forward mode <m> phase <p> running <0|1>   a norm operation finalized (cuDNN's
//   norm-backward mode <m>                           enum values; running: output running statistics)
//   pointwise           a pointwise operation finalized
//   <call> mode <m> x <dims>/<strides> param <dims>/<strides> saved <0|1> running <0|1>
//                       a legacy batch norm call (bn-training, bn-inference, bn-backward;
//                       saved/running: whether those pointers were given)
#include <cudnn_graph.h>
#include <cudnn_ops.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr int64_t kEngines = 2;

struct Attribute {
  cudnnBackendAttributeType_t type;
  int64_t count;
  std::vector<unsigned char> bytes;
};

struct Descriptor {
  cudnnBackendDescriptorType_t type;
  std::map<cudnnBackendAttributeName_t, Attribute> attributes;
};

std::mutex& lock() {
  static std::mutex m;
  return m;
}

size_t size_of(cudnnBackendAttributeType_t type) {
  switch (type) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void*);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_CHAR: return 1;
    case CUDNN_TYPE_FRACTION: return sizeof(cudnnFraction_t);
    default: return 4;  // FLOAT, INT32 and the enums
  }
}

void log_event(const char* format, long long value) {
  const char* path = std::getenv("FAKE_CUDNN_LOG");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, format, value);
    std::fclose(f);
  }
}

void log_text(const std::string& line) {
  const char* path = std::getenv("FAKE_CUDNN_LOG");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

// A legacy tensor descriptor: what cudnnSetTensorNdDescriptor set.
struct FakeTensor {
  std::vector<int> dims, strides;
};

std::string shape_text(cudnnTensorDescriptor_t d) {
  const FakeTensor* t = reinterpret_cast<const FakeTensor*>(d);
  std::string text;
  for (size_t i = 0; i < t->dims.size(); ++i) text += (i ? "," : "") + std::to_string(t->dims[i]);
  text += "/";
  for (size_t i = 0; i < t->strides.size(); ++i) text += (i ? "," : "") + std::to_string(t->strides[i]);
  return text;
}

void log_batch_norm(const char* call, cudnnBatchNormMode_t mode, cudnnTensorDescriptor_t x,
                    cudnnTensorDescriptor_t param, const void* saved, const void* running) {
  log_text(std::string(call) + " mode " + std::to_string(static_cast<int>(mode)) + " x " + shape_text(x) + " param " +
           shape_text(param) + " saved " + (saved ? "1" : "0") + " running " + (running ? "1" : "0"));
}

void set(Descriptor* d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
         const void* values) {
  Attribute a{type, count, std::vector<unsigned char>(size_of(type) * static_cast<size_t>(count))};
  if (count > 0) std::memcpy(a.bytes.data(), values, a.bytes.size());
  d->attributes[name] = std::move(a);
}

// A descriptor the fake owns (the heuristics' engines and knobs); never freed.
Descriptor* make(cudnnBackendDescriptorType_t type) { return new Descriptor{type, {}}; }

int64_t int_attribute(const Descriptor* d, cudnnBackendAttributeName_t name) {
  auto it = d->attributes.find(name);
  int64_t v = -1;
  if (it != d->attributes.end()) std::memcpy(&v, it->second.bytes.data(), sizeof v);
  return v;
}

// A 4-byte attribute (an enum), or -1 when never set.
int enum_attribute(const Descriptor* d, cudnnBackendAttributeName_t name) {
  auto it = d->attributes.find(name);
  int32_t v = -1;
  if (it != d->attributes.end()) std::memcpy(&v, it->second.bytes.data(), sizeof v);
  return v;
}

// Engine configuration i of the heuristics, written into `cfg`.
void fill_heuristic_config(Descriptor* cfg, int64_t i) {
  Descriptor* engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &i);
  Descriptor* knob = make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
  const cudnnBackendKnobType_t knob_type = static_cast<cudnnBackendKnobType_t>(3);
  const int64_t knob_value = 10 + i;
  set(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &knob_type);
  set(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &knob_value);
  set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
  set(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &knob);
}

}  // namespace

extern "C" {

size_t cudnnGetVersion() { return 91300; }
const char* cudnnGetErrorString(cudnnStatus_t) { return "fake cuDNN error"; }
void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (max_size) message[0] = '\0';
}
cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  static int dummy;
  *handle = reinterpret_cast<cudnnHandle_t>(&dummy);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* descriptor) {
  *descriptor = reinterpret_cast<cudnnBackendDescriptor_t>(new Descriptor{type, {}});
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  delete reinterpret_cast<Descriptor*>(descriptor);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void* values) {
  std::lock_guard<std::mutex> guard(lock());
  set(reinterpret_cast<Descriptor*>(descriptor), name, type, count, values);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  std::lock_guard<std::mutex> guard(lock());
  const Descriptor* d = reinterpret_cast<Descriptor*>(descriptor);
  if (d->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) log_event("heuristics\n", 0);
  if (d->type == CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR)
    log_text("norm-forward mode " + std::to_string(enum_attribute(d, CUDNN_ATTR_OPERATION_NORM_FWD_MODE)) + " phase " +
             std::to_string(enum_attribute(d, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE)) + " running " +
             (d->attributes.count(CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC) ? "1" : "0"));
  if (d->type == CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR)
    log_text("norm-backward mode " + std::to_string(enum_attribute(d, CUDNN_ATTR_OPERATION_NORM_BWD_MODE)));
  if (d->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR) log_text("pointwise");
  if (d->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR) {
    const int64_t index = int_attribute(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
    if (index < 0 || index >= kEngines) return CUDNN_STATUS_NOT_SUPPORTED;
    log_event("engine %lld\n", index);
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                                       void* values) {
  std::lock_guard<std::mutex> guard(lock());
  Descriptor* d = reinterpret_cast<Descriptor*>(descriptor);
  if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
    if (count) *count = kEngines;
    for (int64_t i = 0; i < std::min(requested, kEngines); ++i)
      fill_heuristic_config(static_cast<Descriptor**>(values)[i], i);
    return CUDNN_STATUS_SUCCESS;
  }
  auto it = d->attributes.find(name);
  if (it == d->attributes.end()) {  // never set: nothing to give (no notes, no workspace)
    if (count) *count = 0;
    return CUDNN_STATUS_SUCCESS;
  }
  const Attribute& a = it->second;
  if (a.type != type) return CUDNN_STATUS_BAD_PARAM;
  const int64_t n = std::min(requested, a.count);
  if (count) *count = a.count;
  if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    // Descriptors are given by filling the caller's with the stored ones' attributes.
    for (int64_t i = 0; i < n; ++i) {
      Descriptor* stored = nullptr;
      std::memcpy(&stored, a.bytes.data() + i * sizeof(void*), sizeof(void*));
      static_cast<Descriptor**>(values)[i]->attributes = stored->attributes;
    }
  } else if (n > 0) {
    std::memcpy(values, a.bytes.data(), size_of(type) * static_cast<size_t>(n));
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t) {
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  *d = reinterpret_cast<cudnnTensorDescriptor_t>(new FakeTensor);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  delete reinterpret_cast<FakeTensor*>(d);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t, int n, const int dims[],
                                         const int strides[]) {
  FakeTensor* t = reinterpret_cast<FakeTensor*>(d);
  t->dims.assign(dims, dims + n);
  t->strides.assign(strides, strides + n);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBatchNormalizationForwardTraining(cudnnHandle_t, cudnnBatchNormMode_t mode, const void*,
                                                     const void*, const cudnnTensorDescriptor_t x, const void*,
                                                     const cudnnTensorDescriptor_t, void*,
                                                     const cudnnTensorDescriptor_t param, const void*, const void*,
                                                     double, void* running_mean, void*, double, void* saved_mean,
                                                     void*) {
  log_batch_norm("bn-training", mode, x, param, saved_mean, running_mean);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t, cudnnBatchNormMode_t mode, const void*,
                                                      const void*, const cudnnTensorDescriptor_t x, const void*,
                                                      const cudnnTensorDescriptor_t, void*,
                                                      const cudnnTensorDescriptor_t param, const void*, const void*,
                                                      const void* estimated_mean, const void*, double) {
  log_batch_norm("bn-inference", mode, x, param, nullptr, estimated_mean);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBatchNormalizationBackward(cudnnHandle_t, cudnnBatchNormMode_t mode, const void*, const void*,
                                              const void*, const void*, const cudnnTensorDescriptor_t x, const void*,
                                              const cudnnTensorDescriptor_t, const void*,
                                              const cudnnTensorDescriptor_t, void*,
                                              const cudnnTensorDescriptor_t param, const void*, void*, void*, double,
                                              const void* saved_mean, const void*) {
  log_batch_norm("bn-backward", mode, x, param, saved_mean, nullptr);
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
