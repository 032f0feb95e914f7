#include "runtime/weight_prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace onda::runtime {
namespace {

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

// Pages are populated this many bytes at a time, so that a stop waits for one chunk at most.
constexpr uintptr_t kChunkBytes = uintptr_t{8} << 20;

}  // namespace

WeightPrefault::WeightPrefault(std::vector<HostTensor> weights) : weights_(std::move(weights)) {
  if (!weights_.empty()) thread_ = std::thread([this] { populate(); });
}

WeightPrefault::~WeightPrefault() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void WeightPrefault::populate() {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  bool madvise_works = true;
  for (const HostTensor& weight : weights_) {
    const auto begin = reinterpret_cast<uintptr_t>(weight.data());
    const uintptr_t end = begin + weight.byte_size();
    for (uintptr_t at = begin / page * page; at < end; at += kChunkBytes) {
      if (stop_) return;
      const uintptr_t chunk_end = std::min(end, at + kChunkBytes);
      // MADV_POPULATE_READ faults the range in with one call; where the kernel lacks it, one read
      // per page does the same.
      if (madvise_works && madvise(reinterpret_cast<void*>(at), chunk_end - at, MADV_POPULATE_READ) == 0)
        continue;
      madvise_works = false;
      for (uintptr_t p = std::max(at, begin); p < chunk_end; p += page)
        (void)*reinterpret_cast<const volatile std::byte*>(p);
    }
  }
}

}  // namespace onda::runtime
