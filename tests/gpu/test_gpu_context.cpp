// The GPU layer on whatever adapter the tests run on: features confirmed, errors surfaced,
// limits enforced, pool reuse, pipeline cache, readback, profiler, run guards.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>

#include "gpu/command_recorder.h"
#include "gpu/gpu_error.h"
#include "gpu/profiler.h"
#include "gpu/run_guards.h"
#include "gpu/transfer.h"
#include "harness.h"

namespace onda::test {
namespace {

const char* kDoubleShader = R"(
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
struct Params { n: u32 }
@group(0) @binding(1) var<uniform> params: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < params.n) { data[id.x] = data[id.x] * 2.0 + 1.0; }
}
)";

TEST(GpuContext, ReportsAdapterAndLimits) {
  auto& g = gpu();
  EXPECT_FALSE(g.context.adapter_description().name.empty());
  EXPECT_GT(g.context.limits().maxStorageBufferBindingSize, 0u);
  EXPECT_GE(g.context.limits().maxComputeInvocationsPerWorkgroup, 256u);
  std::printf("adapter: %s (%s)\n", g.context.adapter_description().name.c_str(),
              g.context.adapter_description().backend.c_str());
}

TEST(GpuContext, ConfirmedFeaturesWork) {
  auto& g = gpu();
  // Each confirmed feature compiles a real shader (or query set) on this device.
  if (g.context.has(gpu::Feature::ShaderF16)) {
    EXPECT_NO_THROW(
        g.pipelines.get("enable f16;\n@group(0) @binding(0) var<storage, read_write> b: array<f16>;\n"
                        "@compute @workgroup_size(1) fn main() { b[0] = b[0] + 1.0h; }",
                        {}, "f16 check"));
  }
  if (g.context.has(gpu::Feature::Subgroups)) {
    EXPECT_NO_THROW(
        g.pipelines.get("enable subgroups;\n@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n"
                        "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { "
                        "b[i] = subgroupMax(b[i]); }",
                        {}, "subgroup check"));
  }
}

TEST(GpuContext, DispatchUniformsAndReadback) {
  auto& g = gpu();
  const uint32_t n = 1000;
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  auto buffer = g.pool.acquire(n * 4);
  gpu::upload(g.context, buffer->buffer(), 0, host.data(), n * 4);
  const auto& pipeline = g.pipelines.get(kDoubleShader, {}, "double");
  gpu::CommandRecorder recorder(g.context);
  // Two dispatches in one pass: the second sees the first's writes.
  for (int k = 0; k < 2; ++k) {
    recorder.dispatch(pipeline, {{buffer->buffer(), 0, n * 4}}, &n, sizeof(n), {(n + 63) / 64, 1, 1},
                      "double");
  }
  recorder.submit_and_wait();
  auto bytes = gpu::download(g.context, buffer->buffer(), 0, n * 4);
  std::vector<float> out(n);
  std::memcpy(out.data(), bytes.data(), n * 4);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], (host[i] * 2 + 1) * 2 + 1) << "element " << i;
}

// Readbacks reuse their mappable staging buffers: the same size again gets the kept buffer, and what
// it reads is the new contents, never the last readback's.
TEST(GpuContext, ReadbackStagingIsReusedWithoutStaleBytes) {
  auto& g = gpu();
  const uint32_t n = 300;  // 1200 bytes: the staging size rounds up to 1280
  auto buffer = g.pool.acquire(n * 4);
  for (int round = 0; round < 3; ++round) {
    std::vector<float> host(n);
    for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(round * 1000 + i);
    gpu::upload(g.context, buffer->buffer(), 0, host.data(), n * 4);
    // An odd offset and length go through the same kept buffer (the copy is widened to whole words).
    const auto bytes = gpu::download(g.context, buffer->buffer(), 6, n * 4 - 10);
    ASSERT_EQ(bytes.size(), n * 4 - 10);
    EXPECT_EQ(std::memcmp(bytes.data(), reinterpret_cast<const uint8_t*>(host.data()) + 6, bytes.size()), 0)
        << "round " << round;
  }
  gpu::ReadbackBuffers& kept = g.context.readback_buffers();
  wgpu::Buffer first = kept.acquire(g.context, 1200);
  const WGPUBuffer handle = first.Get();
  EXPECT_EQ(first.GetSize(), 1280u);
  kept.give_back(std::move(first));
  wgpu::Buffer again = kept.acquire(g.context, 1280);
  EXPECT_EQ(again.Get(), handle);
  wgpu::Buffer other = kept.acquire(g.context, 1280);  // the kept one is on loan: a new one
  EXPECT_NE(other.Get(), handle);
  kept.give_back(std::move(again));
  kept.give_back(std::move(other));
  // Too large to keep: destroyed, so the next acquire of that size creates a new buffer.
  wgpu::Buffer large = kept.acquire(g.context, gpu::ReadbackBuffers::kMaxKeptBuffer + 256);
  const wgpu::Buffer large_ref = large;  // keeps the handle alive, so a new buffer cannot reuse its address
  kept.give_back(std::move(large));
  wgpu::Buffer large_again = kept.acquire(g.context, gpu::ReadbackBuffers::kMaxKeptBuffer + 256);
  EXPECT_NE(large_again.Get(), large_ref.Get());
}

// A context that polls before it blocks (the GPU default) reads back the same results.
TEST(GpuContext, PollingWaitReadsBackTheSameResults) {
  gpu::ContextOptions options;
  options.spin_wait_microseconds = 2000;
  gpu::Context context(options);
  EXPECT_EQ(context.spin_wait_microseconds(), 2000u);
  gpu::BufferPool pool(context);
  gpu::PipelineCache pipelines(context);
  const uint32_t n = 4096;
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i) * 0.5f - 7.0f;
  auto buffer = pool.acquire(n * 4);
  gpu::upload(context, buffer->buffer(), 0, host.data(), n * 4);
  const auto& pipeline = pipelines.get(kDoubleShader, {}, "double");
  for (int run = 0; run < 5; ++run) {
    gpu::CommandRecorder recorder(context);
    recorder.dispatch(pipeline, {{buffer->buffer(), 0, n * 4}}, &n, sizeof(n), {(n + 63) / 64, 1, 1},
                      "double");
    recorder.submit();
    for (auto& v : host) v = v * 2 + 1;
    const auto bytes = gpu::download(context, buffer->buffer(), 0, n * 4);
    ASSERT_EQ(std::memcmp(bytes.data(), host.data(), n * 4), 0) << "run " << run;
  }
  gpu::ContextOptions blocking;
  blocking.spin_wait_microseconds = 0;
  EXPECT_EQ(gpu::Context(blocking).spin_wait_microseconds(), 0u);
}

TEST(GpuContext, ShaderErrorsAreReported) {
  auto& g = gpu();
  try {
    g.pipelines.get("@compute @workgroup_size(1) fn main() { let x: f32 = undefined_name; }", {}, "broken");
    FAIL() << "a broken shader compiled";
  } catch (const gpu::GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("broken"), std::string::npos) << e.what();
  }
}

TEST(GpuContext, ValidationErrorsSurfaceAtSync) {
  auto& g = gpu();
  const auto& pipeline = g.pipelines.get(kDoubleShader, {}, "double");
  auto buffer = g.pool.acquire(256);
  gpu::CommandRecorder recorder(g.context);
  // Too many workgroups in x: Dawn reports a validation error; it must reach the caller.
  recorder.dispatch(pipeline, {{buffer->buffer(), 0, 256}}, &pipeline, 4,
                    {g.context.limits().maxComputeWorkgroupsPerDimension + 1, 1, 1}, "oversized");
  EXPECT_THROW(recorder.submit_and_wait(), gpu::GpuError);
  EXPECT_NO_THROW(g.context.check_errors());  // reported once, then the context is usable again
}

TEST(GpuContext, BufferLimitsAreReported) {
  auto& g = gpu();
  const uint64_t too_big = g.context.limits().maxBufferSize + 4;
  try {
    g.pool.acquire(too_big);
    FAIL() << "no error for a buffer over maxBufferSize";
  } catch (const gpu::DeviceLimitError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(too_big)), std::string::npos) << e.what();
  }
}

TEST(GpuContext, BindingLimitIsChecked) {
  auto& g = gpu();
  const uint64_t limit = g.context.limits().maxStorageBufferBindingSize;
  if (limit + 256 > g.context.limits().maxBufferSize || limit > (uint64_t{1} << 31))
    GTEST_SKIP() << "limit too large to test";
  auto buffer = g.pool.acquire(limit + 256);
  const auto& pipeline = g.pipelines.get(kDoubleShader, {}, "double");
  gpu::CommandRecorder recorder(g.context);
  uint32_t n = 1;
  EXPECT_THROW(recorder.dispatch(pipeline, {{buffer->buffer(), 0, limit + 256}}, &n, 4, {1, 1, 1}, "too big"),
               gpu::DeviceLimitError);
}

// A guard copies a flag word after the work recorded before it; a non-zero word becomes a GpuError with
// the guard's text once (the slot is cleared), a zero word passes, and a replay-style second recording
// of the same text reuses its slot.
TEST(GpuContext, RunGuardsReportFlagWords) {
  Gpu& g = gpu();
  gpu::RunGuards& guards = g.context.guards();
  auto flags = g.pool.acquire(256);
  const uint32_t words[2] = {0, 7};
  gpu::upload(g.context, flags->buffer(), 0, words, sizeof words);
  {
    gpu::CommandRecorder recorder(g.context);
    guards.guard(recorder, flags->buffer(), 0, "test guard: a fine kernel");
    recorder.submit_and_wait();
  }
  EXPECT_NO_THROW(guards.check());
  {
    gpu::CommandRecorder recorder(g.context);
    guards.guard(recorder, flags->buffer(), 4, "test guard: a failed kernel");
    gpu::PendingDownload pending = guards.begin_check(recorder);
    recorder.submit();
    try {
      guards.finish_check(pending.finish(g.context));
      ADD_FAILURE() << "a set flag word passed the check";
    } catch (const gpu::GpuError& e) {
      EXPECT_STREQ(e.what(), "test guard: a failed kernel");
    }
  }
  EXPECT_NO_THROW(guards.check());  // reported once: the slot was cleared
  {
    gpu::CommandRecorder recorder(g.context);
    guards.guard(recorder, flags->buffer(), 4, "test guard: a failed kernel");  // same slot again
    recorder.submit_and_wait();
  }
  EXPECT_THROW(guards.check(), gpu::GpuError);
}

TEST(GpuContext, PoolReusesBuffers) {
  gpu::BufferPool pool(gpu().context);  // its own pool: other tests leave buffers in the shared one
  { auto a = pool.acquire(123457); }
  { auto b = pool.acquire(123400); }  // same size class: served from the pool
  EXPECT_EQ(pool.stats().allocations, 1u);
  { auto a = pool.acquire(123457), b = pool.acquire(123457); }  // both on loan: a second buffer
  EXPECT_EQ(pool.stats().allocations, 2u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_GE(gpu::BufferPool::size_class(123457), 123457u);
  EXPECT_LE(gpu::BufferPool::size_class(123457), 123457u * 9 / 8);
}

// A pool that runs out of device memory while a recorder holds commands naming its cached buffers
// (a kernel's scratch goes back to the pool once recorded) submits them before destroying the cache:
// the recorded work still runs on the bytes it was given. Without the flush, the submit names a
// destroyed buffer and Dawn rejects it. The device's memory is emulated by the pool's byte limit.
TEST(GpuContext, OutOfMemoryTrimFlushesRecordedWork) {
  for (const bool flush : {true, false}) {
    SCOPED_TRACE(flush ? "flush before trim" : "no flush");
    auto& g = gpu();
    gpu::BufferPool pool(g.context);
    const uint32_t n = 16384;                              // 64 KiB
    const uint64_t third_bytes = 96 * 1024;                // a size class of its own
    pool.set_device_bytes_limit(2 * n * 4 + third_bytes);  // the destination and the third: no scratch
    std::vector<float> host(n);
    for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i) - 100.0f;
    auto destination = pool.acquire(2 * n * 4);  // another size class: not the scratch's
    gpu::CommandRecorder recorder(g.context);
    {
      auto scratch = pool.acquire(n * 4);
      gpu::upload(g.context, scratch->buffer(), 0, host.data(), n * 4);
      recorder.copy(scratch->buffer(), 0, destination->buffer(), 0, n * 4);
    }  // the scratch is back in the pool's cache, named by the unsubmitted copy
    if (flush) pool.set_before_trim([&recorder] { recorder.submit(); });
    auto third = pool.acquire(third_bytes);  // past the limit with the cached scratch: it must be trimmed
    EXPECT_EQ(pool.stats().bytes_allocated, 2 * n * 4 + third_bytes);
    if (!flush) {
      EXPECT_THROW(recorder.submit_and_wait(), gpu::GpuError);
      continue;
    }
    recorder.submit_and_wait();
    const auto bytes = gpu::download(g.context, destination->buffer(), 0, n * 4);
    EXPECT_EQ(std::memcmp(bytes.data(), host.data(), n * 4), 0);
  }
}

TEST(GpuContext, PipelineCacheKeysOnConstants) {
  auto& g = gpu();
  const char* shader =
      "override scale: f32 = 1.0;\n@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n"
      "@compute @workgroup_size(1) fn main() { b[0] = b[0] * scale; }";
  const size_t before = g.pipelines.size();
  g.pipelines.get(shader, {{"scale", 2.0}});
  g.pipelines.get(shader, {{"scale", 2.0}});
  g.pipelines.get(shader, {{"scale", 3.0}});
  EXPECT_EQ(g.pipelines.size(), before + 2);
}

// Facts about a pipeline (the cooperative kernel's residency probe) stay with the cache that made
// it: a second cache compiles its own pipeline of the same shader and knows nothing yet, so a
// pipeline created at a freed one's address cannot inherit its answer.
TEST(GpuContext, PipelineCacheRemembersFactsPerPipeline) {
  auto& g = gpu();
  const std::string shader = std::string(kDoubleShader) + "\n// facts test\n";
  gpu::PipelineCache first(g.context), second(g.context);
  const auto& a = first.get(shader, {}, "facts");
  EXPECT_FALSE(first.recall(a, "grid 4x1x1 resident").has_value());
  first.remember(a, "grid 4x1x1 resident", true);
  first.remember(a, "grid 9x1x1 resident", false);
  EXPECT_EQ(first.recall(a, "grid 4x1x1 resident"), std::optional<bool>(true));
  EXPECT_EQ(first.recall(a, "grid 9x1x1 resident"), std::optional<bool>(false));
  EXPECT_FALSE(first.recall(a, "grid 5x1x1 resident").has_value());
  const auto& b = second.get(shader, {}, "facts");
  EXPECT_NE(a.Get(), b.Get());
  EXPECT_FALSE(second.recall(b, "grid 4x1x1 resident").has_value());
}

TEST(GpuContext, ProfilerAttributesTime) {
  auto& g = gpu();
  if (!g.context.has(gpu::Feature::TimestampQuery)) GTEST_SKIP() << "no timestamp-query";
  gpu::Profiler profiler(g.context);
  const uint32_t n = 1 << 16;
  auto buffer = g.pool.acquire(n * 4);
  const auto& pipeline = g.pipelines.get(kDoubleShader, {}, "double");
  gpu::CommandRecorder recorder(g.context, &profiler);
  recorder.dispatch(pipeline, {{buffer->buffer(), 0, n * 4}}, &n, 4, {n / 64, 1, 1}, "first");
  recorder.dispatch(pipeline, {{buffer->buffer(), 0, n * 4}}, &n, 4, {n / 64, 1, 1}, "second");
  recorder.dispatch(pipeline, {{buffer->buffer(), 0, n * 4}}, &n, 4, {n / 64, 1, 1}, "second");
  recorder.submit_and_wait();
  auto entries = profiler.entries();
  ASSERT_EQ(entries.size(), 2u);
  for (const auto& e : entries) {
    EXPECT_EQ(e.count, e.name == "first" ? 1u : 2u);
    EXPECT_GE(e.total_ms, 0.0);
  }
  EXPECT_GT(profiler.total_ms(), 0.0);
}

TEST(GpuContext, UnknownAdapterListsAdapters) {
  gpu::ContextOptions options;
  options.adapter = "no-such-adapter-xyz";
  try {
    gpu::Context context(options);
    FAIL() << "an unknown adapter was accepted";
  } catch (const gpu::GpuError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("no-such-adapter-xyz"), std::string::npos) << message;
    EXPECT_NE(message.find("[0]"), std::string::npos) << "the adapters should be listed: " << message;
  }
}

}  // namespace
}  // namespace onda::test
