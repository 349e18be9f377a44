// boo: launch timing with CUPTI activity records or CUDA events.
#include "bench/launch_timer.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cuda/cupti_api.hpp"

namespace boo::bench {
namespace {

using cuda::CuptiApi;

#define BOO_CUPTI_RETURN_IF_ERROR(api, call)                             \
  do {                                                                   \
    CUptiResult boo_cupti_result_ = (api).call;                          \
    if (boo_cupti_result_ != CUPTI_SUCCESS)                              \
      return ::boo::cuda::cupti_status((api), boo_cupti_result_, #call); \
  } while (0)

// Records delivered by CUPTI's buffer callbacks (on CUPTI's threads) while a
// timing is collecting; drained by the timer.
struct Collected {
  std::atomic<bool> collecting{false};
  std::mutex mutex;
  std::vector<KernelRecord> kernels;
  std::vector<uint32_t> correlations;  // CUPTI correlation id of each of `kernels`
  std::map<uint32_t, uint64_t> external_by_correlation;
  std::map<uint32_t, uint64_t> api_start_by_correlation;  // CPU start of the API call that issued it

  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    kernels.clear();
    correlations.clear();
    external_by_correlation.clear();
    api_start_by_correlation.clear();
  }
};

Collected& collected() {
  static Collected c;
  return c;
}

constexpr size_t kBufferBytes = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Collected& c = collected();
  Result<const CuptiApi*> api = cuda::cupti_api();
  // Outside a timing (cuDNN's tuning, warm-up) records are dropped, so a long run holds none.
  if (api.ok() && valid > 0 && c.collecting.load()) {
    std::lock_guard<std::mutex> lock(c.mutex);
    CUpti_Activity* record = nullptr;
    while ((*api)->cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        c.kernels.push_back(KernelRecord{k->name ? k->name : "?", k->start, k->end, k->deviceId, k->streamId, -1});
        c.correlations.push_back(k->correlationId);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        c.kernels.push_back(KernelRecord{"[memset]", m->start, m->end, m->deviceId, m->streamId, -1});
        c.correlations.push_back(m->correlationId);
      } else if (record->kind == CUPTI_ACTIVITY_KIND_DRIVER || record->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
        const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        c.api_start_by_correlation[a->correlationId] = a->start;
      } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        c.external_by_correlation[e->correlationId] = e->externalId;
      }
    }
  }
  std::free(buffer);
}

class CuptiTimer final : public LaunchTimer {
 public:
  explicit CuptiTimer(const CuptiApi& api) : api_(api) {}

  static Status enable(const CuptiApi& api) {
    BOO_CUPTI_RETURN_IF_ERROR(api, cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    BOO_CUPTI_RETURN_IF_ERROR(api, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    BOO_CUPTI_RETURN_IF_ERROR(api, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    // External correlation records are tied to the API records of the calls
    // made between push and pop, so the driver and runtime API kinds are on too.
    BOO_CUPTI_RETURN_IF_ERROR(api, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    BOO_CUPTI_RETURN_IF_ERROR(api, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    BOO_CUPTI_RETURN_IF_ERROR(api, cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    return ok_status();
  }

  Result<TimedLaunches> time(Runtime& rt, const std::function<Status(int64_t)>& launch, int64_t iterations,
                             const std::function<Status()>& before_each) override {
    Collected& c = collected();
    BOO_RETURN_IF_ERROR(rt.synchronize());
    // Earlier work (warm-up, copies) is flushed out and dropped before collecting.
    BOO_CUPTI_RETURN_IF_ERROR(api_, cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    c.clear();
    c.collecting = true;
    Status st = issue(launch, iterations, before_each);
    if (st.ok()) st = rt.synchronize();
    if (CUptiResult r = api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); st.ok() && r != CUPTI_SUCCESS)
      st = cuda::cupti_status(api_, r, "cuptiActivityFlushAll");
    c.collecting = false;
    if (!st.ok()) {
      c.clear();
      return st;
    }
    Result<TimedLaunches> out = attribute(iterations);
    c.clear();
    return out;
  }

 private:
  // Launch i runs inside external correlation id first_ + i; ids grow across
  // calls, so a late record of one call can never count in the next.
  Status issue(const std::function<Status(int64_t)>& launch, int64_t iterations,
               const std::function<Status()>& before_each) {
    first_ = next_external_;
    next_external_ += static_cast<uint64_t>(iterations);
    windows_.assign(static_cast<size_t>(iterations), {0, 0});
    for (int64_t i = 0; i < iterations; ++i) {
      if (before_each) BOO_RETURN_IF_ERROR(before_each());
      auto& [begin, end] = windows_[static_cast<size_t>(i)];
      api_.cuptiGetTimestamp(&begin);
      BOO_CUPTI_RETURN_IF_ERROR(api_, cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                                              first_ + static_cast<uint64_t>(i)));
      Status st = launch(i);
      uint64_t popped = 0;
      api_.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped);
      api_.cuptiGetTimestamp(&end);
      BOO_RETURN_IF_ERROR(st);
    }
    return ok_status();
  }

  Result<TimedLaunches> attribute(int64_t iterations) {
    Collected& c = collected();
    std::lock_guard<std::mutex> lock(c.mutex);
    TimedLaunches out;
    out.source = "cupti";
    out.per_launch_us.assign(static_cast<size_t>(iterations), 0.0);
    std::vector<int64_t> kernels_per_launch(static_cast<size_t>(iterations), 0);
    std::map<std::string, size_t> by_name;
    for (size_t r = 0; r < c.kernels.size(); ++r) {
      const int64_t launch = launch_of(c, c.correlations[r], iterations);
      if (launch < 0) continue;  // not issued by one of these launches (the L2 flush)
      KernelRecord k = c.kernels[r];
      k.launch = launch;
      const double us = static_cast<double>(k.end_ns - k.start_ns) * 1e-3;
      out.per_launch_us[static_cast<size_t>(k.launch)] += us;
      ++kernels_per_launch[static_cast<size_t>(k.launch)];
      auto [it, inserted] = by_name.try_emplace(k.name, out.kernels.size());
      if (inserted) out.kernels.push_back(KernelTiming{k.name, {}});
      out.kernels[it->second].samples_us.push_back(us);
      out.records.push_back(std::move(k));
    }
    // Every launch must be accounted for: a launch with no record means lost
    // records (BOO's fractional dispatch counts), never a zero time.
    if (out.records.empty())
      return unavailable("CUPTI delivered no kernel record for any of " + std::to_string(iterations) +
                         " timed launches (" + std::to_string(c.kernels.size()) + " kernel, " +
                         std::to_string(c.external_by_correlation.size()) + " correlation and " +
                         std::to_string(c.api_start_by_correlation.size()) + " API records came)");
    for (int64_t i = 0; i < iterations; ++i) {
      if (kernels_per_launch[static_cast<size_t>(i)] == 0)
        return internal_error("CUPTI delivered no kernel record for timed launch " + std::to_string(i) + " of " +
                              std::to_string(iterations) + " (records lost: " + std::to_string(c.kernels.size()) +
                              " kernel, " + std::to_string(c.external_by_correlation.size()) + " correlation and " +
                              std::to_string(c.api_start_by_correlation.size()) +
                              " API records came); rerun or use --timer events");
    }
    std::sort(out.records.begin(), out.records.end(),
              [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
    return out;
  }

  // The timed launch that issued the kernel with CUPTI correlation id
  // `correlation`, or -1: by the external id pushed around the launch, else
  // by when its API call started (within which launch's CPU time window).
  int64_t launch_of(const Collected& c, uint32_t correlation, int64_t iterations) const {
    if (auto ext = c.external_by_correlation.find(correlation); ext != c.external_by_correlation.end()) {
      if (ext->second >= first_ && ext->second < first_ + static_cast<uint64_t>(iterations))
        return static_cast<int64_t>(ext->second - first_);
      return -1;
    }
    auto api = c.api_start_by_correlation.find(correlation);
    if (api == c.api_start_by_correlation.end()) return -1;
    // Windows are disjoint and in order: the last one starting at or before the call.
    auto after = std::upper_bound(windows_.begin(), windows_.end(), api->second,
                                  [](uint64_t t, const std::pair<uint64_t, uint64_t>& w) { return t < w.first; });
    if (after == windows_.begin()) return -1;
    const auto& window = *(after - 1);
    return api->second <= window.second ? static_cast<int64_t>(after - 1 - windows_.begin()) : -1;
  }

  const CuptiApi& api_;
  uint64_t next_external_ = 1;
  uint64_t first_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> windows_;  // CPU [begin, end] of each launch, CUPTI's clock
};

class EventTimer final : public LaunchTimer {
 public:
  Result<TimedLaunches> time(Runtime& rt, const std::function<Status(int64_t)>& launch, int64_t iterations,
                             const std::function<Status()>& before_each) override {
    TimedLaunches out;
    out.source = "cuda events";
    BOO_ASSIGN_OR_RETURN(out.per_launch_us, rt.time_on_stream(launch, iterations, before_each));
    return out;
  }
};

}  // namespace

Result<LaunchTimer*> cupti_timer() {
  static std::once_flag once;
  static Result<LaunchTimer*> timer = unavailable("CUPTI not initialized");
  std::call_once(once, [] {
    timer = [&]() -> Result<LaunchTimer*> {
      BOO_ASSIGN_OR_RETURN(const CuptiApi* api, cuda::cupti_api());
      if (Status st = CuptiTimer::enable(*api); !st.ok())
        return std::move(st).annotate("CUPTI's activity API is unavailable (is another profiler attached?)");
      static CuptiTimer t(*api);
      return static_cast<LaunchTimer*>(&t);
    }();
  });
  return timer;
}

LaunchTimer& event_timer() {
  static EventTimer t;
  return t;
}

int64_t input_rotation_count(size_t input_bytes, int64_t l2_bytes, bool flush_l2, size_t memory_budget) {
  if (flush_l2 || input_bytes == 0 || l2_bytes <= 0) return 1;
  const size_t span = 2 * static_cast<size_t>(l2_bytes);
  int64_t sets = static_cast<int64_t>((span + input_bytes - 1) / input_bytes);
  sets = std::min<int64_t>(sets, 8);
  sets = std::min<int64_t>(sets, static_cast<int64_t>(memory_budget / input_bytes));
  return std::max<int64_t>(sets, 1);
}

int64_t timed_input_sets(const Runtime& rt, const TimingOptions& options, const std::vector<base::HostTensor>& args) {
  constexpr size_t kRotationBudgetBytes = size_t{1} << 30;  // device memory the copies may take
  size_t input_bytes = 0;
  for (const base::HostTensor& t : args) input_bytes += t.size_bytes();
  return input_rotation_count(input_bytes, rt.device().l2_bytes, options.flush_l2, kRotationBudgetBytes);
}

Result<BackendTensors> upload_backend_tensors(Runtime& rt, const OpSignature& sig,
                                              const std::vector<base::HostTensor>& args, int64_t input_sets) {
  BackendTensors out;
  out.sets.resize(static_cast<size_t>(input_sets));
  const std::vector<TensorSpec> arg_specs = sig.arguments();
  // The first set from the host, the others from the first (at device bandwidth).
  for (size_t s = 0; s < out.sets.size(); ++s) {
    for (size_t i = 0; i < args.size(); ++i) {
      BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt.allocate(args[i].size_bytes()));
      if (s == 0) BOO_RETURN_IF_ERROR(rt.copy_to_device(buf, args[i].data(), args[i].size_bytes()));
      else BOO_RETURN_IF_ERROR(rt.copy_on_device(buf, out.arguments[i], args[i].size_bytes()));
      out.sets[s][arg_specs[i].name] = buf.data();
      out.arguments.push_back(std::move(buf));
    }
  }
  for (const TensorSpec& spec : sig.results()) {
    BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt.allocate(spec.storage_bytes()));
    BOO_RETURN_IF_ERROR(rt.fill_bytes(buf, 0xff));
    for (TensorAddresses& set : out.sets) set[spec.name] = buf.data();
    out.results.push_back(std::move(buf));
  }
  return out;
}

Status download_backend_results(Runtime& rt, const OpSignature& sig, const BackendTensors& tensors, BackendRun& out) {
  const std::vector<TensorSpec> result_specs = sig.results();
  for (size_t i = 0; i < result_specs.size(); ++i) {
    // Every byte is the device buffer's (0xFF where the kernel wrote nothing).
    BOO_ASSIGN_OR_RETURN(base::HostTensor host, base::HostTensor::allocate_unset(result_specs[i]));
    BOO_RETURN_IF_ERROR(rt.copy_to_host(host.data(), tensors.results[i], host.size_bytes()));
    out.results.push_back(std::move(host));
  }
  return ok_status();
}

LaunchCounts launch_counts_for_min_time(double launch_us, double min_time_s, int64_t input_sets) {
  // A launch is never counted as shorter than a nanosecond, so the division stays finite.
  const double launches_per_second = 1e6 / std::max(launch_us, 1e-3);
  auto launches = [&](double seconds, int64_t fewest) {
    const double wanted = std::ceil(seconds * launches_per_second);  // compared as a double: it may be huge
    const int64_t capped = wanted >= static_cast<double>(kMostSizedLaunches) ? kMostSizedLaunches
                                                                               : static_cast<int64_t>(wanted);
    return std::max(capped, fewest);
  };
  return LaunchCounts{launches(min_time_s / 4, std::max<int64_t>(input_sets, 1)),
                      launches(min_time_s, kFewestSizedLaunches)};
}

Status time_backend_launches(Runtime& rt, const TimingOptions& options, const RunOptions& run,
                             const std::function<Status(int64_t)>& launch, const std::string& label, BackendRun& out) {
  const auto start = std::chrono::steady_clock::now();
  // Warm-up, untimed: clocks up, caches and TLBs filled, every input copy once.
  const int64_t input_sets = std::max<int64_t>(out.input_sets, 1);
  int64_t iterations = run.iterations;
  if (run.min_time_s > 0) {
    // The first round, timed with events, says how long a launch takes.
    BOO_ASSIGN_OR_RETURN(std::vector<double> first_us, rt.time_on_stream(launch, input_sets));
    std::nth_element(first_us.begin(), first_us.begin() + static_cast<std::ptrdiff_t>(first_us.size() / 2),
                     first_us.end());
    const LaunchCounts counts = launch_counts_for_min_time(first_us[first_us.size() / 2], run.min_time_s, input_sets);
    for (int64_t i = input_sets; i < counts.warmup; ++i) BOO_RETURN_IF_ERROR(launch(i));
    iterations = counts.timed;
  } else {
    for (int64_t i = 0; i < input_sets; ++i) BOO_RETURN_IF_ERROR(launch(i));
  }
  BOO_RETURN_IF_ERROR(rt.synchronize());
  // The L2 flush: a memset over twice the L2 evicts everything the last launch left.
  DeviceBuffer flush;
  std::function<Status()> before_each;
  if (options.flush_l2) {
    BOO_ASSIGN_OR_RETURN(flush, rt.allocate(2 * static_cast<size_t>(std::max(rt.device().l2_bytes, 1 << 20))));
    before_each = [&] { return rt.fill_bytes(flush, 0); };
  }
  // CUPTI that records nothing at all (an environment without activity
  // support) is set aside for the process, with a note, and events time instead.
  static std::atomic<bool> cupti_records_nothing{false};
  Result<TimedLaunches> timed = unavailable("not timed");
  if (options.prefer_cupti && !cupti_records_nothing)
    if (Result<LaunchTimer*> cupti = cupti_timer(); cupti.ok()) {
      timed = (*cupti)->time(rt, launch, iterations, before_each);
      if (!timed.ok() && timed.status().code() == StatusCode::kUnavailable) {
        cupti_records_nothing = true;
        std::fprintf(stderr, "boo: %s; timing with CUDA events from now on\n", timed.status().message().c_str());
      }
    }
  if (!timed.ok() && timed.status().code() == StatusCode::kUnavailable)
    timed = event_timer().time(rt, launch, iterations, before_each);
  if (!timed.ok()) return timed.status();
  out.timer = timed->source;
  out.timed_launches = iterations;
  if (timed->kernels.empty()) {
    out.kernels.push_back(KernelTiming{label, std::move(timed->per_launch_us)});
  } else {
    out.kernels = std::move(timed->kernels);
    out.kernel_records = std::move(timed->records);
  }
  out.timing_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ok_status();
}

}  // namespace boo::bench
