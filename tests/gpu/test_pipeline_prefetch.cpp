// Pipelines made ahead from a manifest (gpu/pipeline_prefetch.h) through a PipelineCache: a key is
// served by its prefetched pipeline only when the WGSL rendered now is the entry's text (the
// pipeline then computes what that text says), a stale entry is never used, an entry that does not
// compile raises no device error, and what nobody took is listed for the next manifest.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu/command_recorder.h"
#include "gpu/gpu_error.h"
#include "gpu/pipeline_cache.h"
#include "gpu/pipeline_prefetch.h"
#include "gpu/transfer.h"
#include "harness.h"

namespace onda::test {
namespace {

// data[i] = data[i] * factor + 1, for i < n.
std::string scale_shader(int factor) {
  return "@group(0) @binding(0) var<storage, read_write> data: array<f32>;\n"
         "struct Params { n: u32 }\n"
         "@group(0) @binding(1) var<uniform> params: Params;\n"
         "@compute @workgroup_size(64)\n"
         "fn main(@builtin(global_invocation_id) id: vec3<u32>) {\n"
         "  if (id.x < params.n) { data[id.x] = data[id.x] * " +
         std::to_string(factor) + ".0 + 1.0; }\n}\n";
}

gpu::PipelineKey scale_key(const std::string& variant) {
  return gpu::PipelineKey("test/scale", {{"variant", variant}});
}

// Runs `pipeline` once over 0, 1, ..., n-1 and returns the result.
std::vector<float> run_once(Gpu& g, const wgpu::ComputePipeline& pipeline) {
  const uint32_t n = 300;
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  auto buffer = g.pool.acquire(n * 4);
  gpu::upload(g.context, buffer->buffer(), 0, host.data(), n * 4);
  gpu::CommandRecorder recorder(g.context);
  recorder.dispatch(pipeline, {{buffer->buffer(), 0, n * 4}}, &n, sizeof(n), {(n + 63) / 64, 1, 1}, "scale");
  recorder.submit_and_wait();
  const auto bytes = gpu::download(g.context, buffer->buffer(), 0, n * 4);
  std::vector<float> out(n);
  std::memcpy(out.data(), bytes.data(), n * 4);
  return out;
}

void expect_scaled(const std::vector<float>& out, int factor) {
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], static_cast<float>(i) * factor + 1.0f) << "element " << i << ", factor " << factor;
}

TEST(PipelinePrefetch, MatchingTextsAreServedStaleOnesAreNot) {
  auto& g = gpu();
  std::vector<gpu::PipelineManifestEntry> unused_left;
  {
    gpu::PipelineCache cache(g.context);
    cache.remember_created();
    cache.prefetch({{scale_key("three"), "three", scale_shader(3)},
                    {scale_key("five"), "five", scale_shader(5)},  // rendered below as 7: stale
                    {scale_key("broken"), "broken", "fn main( { this is not WGSL"},
                    {scale_key("nine"), "nine", scale_shader(9)}});  // never asked for
    ASSERT_NE(cache.prefetched(), nullptr);
    EXPECT_EQ(cache.prefetched()->entries(), 4u);

    const wgpu::ComputePipeline& three = cache.get(
        scale_key("three"), [] { return scale_shader(3); }, "three");
    EXPECT_EQ(cache.stats().prefetched, 1u);
    const wgpu::ComputePipeline& seven = cache.get(
        scale_key("five"), [] { return scale_shader(7); }, "five");
    EXPECT_EQ(cache.stats().prefetched, 1u) << "a stale entry served its key";
    EXPECT_EQ(cache.stats().pipelines, 2u);
    expect_scaled(run_once(g, three), 3);
    expect_scaled(run_once(g, seven), 7);
    // A key the manifest does not hold is created as usual.
    expect_scaled(run_once(g, cache.get(
                                  scale_key("two"), [] { return scale_shader(2); }, "two")),
                  2);
    EXPECT_EQ(cache.stats().prefetched, 1u);

    // What the cache created, in order, with the texts rendered now.
    ASSERT_EQ(cache.created().size(), 3u);
    EXPECT_EQ(cache.created()[0].key, scale_key("three"));
    EXPECT_EQ(cache.created()[1].wgsl, scale_shader(7));
    EXPECT_EQ(cache.created()[2].key, scale_key("two"));
    unused_left = cache.prefetched()->untaken_entries();
    // The cache (and its workers) end here: every entry has been tried.
  }
  // The entry that does not compile failed quietly: no device error.
  EXPECT_NO_THROW(g.context.check_errors());
  // Left for the next manifest: the entry nobody asked for (the broken one may still have been
  // under way when it was listed, never the taken or stale ones).
  bool nine = false;
  for (const auto& entry : unused_left) {
    EXPECT_NE(entry.key, scale_key("three"));
    EXPECT_NE(entry.key, scale_key("five"));
    nine = nine || entry.key == scale_key("nine");
  }
  EXPECT_TRUE(nine);
}

// An entry whose text is the rendered text but does not compile: the cache creates it as usual,
// which reports the compiler's error as without a manifest.
TEST(PipelinePrefetch, AnEntryThatDoesNotCompileFailsAsWithoutAManifest) {
  auto& g = gpu();
  gpu::PipelineCache cache(g.context);
  const std::string broken = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }";
  cache.prefetch({{scale_key("broken"), "broken", broken}, {scale_key("four"), "four", scale_shader(4)}});
  EXPECT_THROW(cache.get(
                   scale_key("broken"), [&] { return broken; }, "broken"),
               gpu::GpuError);
  expect_scaled(run_once(g, cache.get(
                                scale_key("four"), [] { return scale_shader(4); }, "four")),
                4);
  EXPECT_EQ(cache.stats().prefetched, 1u);
  EXPECT_NO_THROW(g.context.check_errors());
}

}  // namespace
}  // namespace onda::test
