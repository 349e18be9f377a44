// boo: parallel_for over std::thread.
#include "base/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace boo::base {
namespace {
std::atomic<int> g_num_threads{0};
}

int num_threads() {
  int n = g_num_threads.load();
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

void set_num_threads(int n) { g_num_threads.store(std::max(0, n)); }

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  // Several chunks per thread balance uneven per-element work (e.g. padding borders).
  const int64_t threads = std::min<int64_t>(num_threads(), n);
  if (threads <= 1) {
    body(0, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(n, threads * 8);
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
      body(n * c / chunks, n * (c + 1) / chunks);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace boo::base
