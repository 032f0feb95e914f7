// While a run records: an out-of-memory allocation in any of the given pools submits the commands
// recorded so far before the pool destroys its cached buffers (BufferPool::set_before_trim), since
// those commands may still name a cached buffer (kernels' scratch returns to the pool once recorded).
#pragma once
#include <initializer_list>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"

namespace onda::gpu {

class FlushBeforeTrim {
 public:
  FlushBeforeTrim(std::initializer_list<BufferPool*> pools, CommandRecorder& recorder) : pools_(pools) {
    for (BufferPool* pool : pools_) pool->set_before_trim([&recorder] { recorder.submit(); });
  }
  ~FlushBeforeTrim() {
    for (BufferPool* pool : pools_) pool->set_before_trim(nullptr);
  }
  FlushBeforeTrim(const FlushBeforeTrim&) = delete;
  FlushBeforeTrim& operator=(const FlushBeforeTrim&) = delete;

 private:
  std::vector<BufferPool*> pools_;
};

}  // namespace onda::gpu
