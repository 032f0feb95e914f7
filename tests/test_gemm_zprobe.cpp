#include <gtest/gtest.h>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include "gpu/command_recorder.h"
#include "harness.h"
namespace onda::test {
TEST(GemmZProbe, CompileTime) {
  auto& g = gpu();
  std::string text = std::getenv("PROBE_SRC");
  auto c0 = std::clock();
  auto t0 = std::chrono::steady_clock::now();
  const auto& pipe = g.pipelines.get(text, {}, "probe");
  auto buf = g.pool.acquire(4096); auto buf2 = g.pool.acquire(4096); auto buf3 = g.pool.acquire(4096);
  gpu::CommandRecorder rec(g.context);
  std::vector<uint8_t> params(128, 0);
  rec.dispatch(pipe, {{buf->buffer(), 0, 1024}, {buf->buffer(), 1024, 1024}, {buf2->buffer(), 0, 1024}}, params.data(), 128, {1, 1, 1}, "probe");
  rec.submit_and_wait();
  auto t1 = std::chrono::steady_clock::now();
  std::printf("compile %.0f ms wall, %.0f ms cpu\n", std::chrono::duration<double, std::milli>(t1 - t0).count(), 1000.0 * (std::clock() - c0) / CLOCKS_PER_SEC);
}
}
