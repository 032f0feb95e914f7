#include "gpu/clock_warmup.h"

#include <chrono>

#include "gpu/command_recorder.h"

namespace onda::gpu {

void warm_up_clocks(Context& context, BufferPool& pool, double seconds) {
  constexpr uint64_t kBytes = uint64_t{64} << 20;
  const auto from = pool.acquire(kBytes), to = pool.acquire(kBytes);
  for (const auto start = std::chrono::steady_clock::now();
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds;) {
    CommandRecorder recorder(context);
    for (int i = 0; i < 20; ++i) recorder.copy(from->buffer(), 0, to->buffer(), 0, kBytes);
    recorder.submit_and_wait();
  }
}

}  // namespace onda::gpu
