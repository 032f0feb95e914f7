// Conv / ConvTranspose timings of the paths on shapes like HTDemucs' (build/bench_conv_paths).
// Correctness is covered by tests/kernels/conv/test_conv.cpp; this only reports milliseconds per run (wall clock,
// submit and wait).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "gpu/command_recorder.h"
#include "gtest_bench.h"
#include "harness.h"
#include "kernels/conv/conv.h"

namespace onda::test {
namespace {

using namespace kernels::conv;

double time_ms(const ConvGeometry& g, ConvPath path,
               const std::optional<std::vector<float>>& diagonal = std::nullopt, bool check = false) {
  auto& gp = gpu();
  const kernels::KernelContext kc{gp.context, gp.pipelines};
  Shape x_shape = {g.batch, g.in_channels};
  x_shape.insert(x_shape.end(), g.in_size.begin(), g.in_size.end());
  Random r(1);
  const Tensor x = upload_floats(r.normal(element_count(x_shape)), DType::f32, x_shape);
  std::vector<float> values = r.normal(element_count(g.weight_shape()));
  if (check) {  // a real windowed identity, so that the check passes
    const int64_t n = g.in_channels;
    values.assign(n * n, 0.0f);
    for (int64_t k = 0; k < n; ++k) values[k * n + k] = 0.5f;
  }
  const Tensor w = upload_floats(values, DType::f32, g.weight_shape());
  const Tensor y = Tensor::empty(gp.pool, DType::f32, g.output_shape());
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    gpu::CommandRecorder recorder(gp.context);
    const auto start = std::chrono::steady_clock::now();
    if (g.transpose) {
      ConvTransposeWeights cw;
      cw.w = w;
      cw.diagonal = diagonal;
      cw.check_windowed_identity = check;
      record_conv_transpose(kc, recorder, gp.pool, g, cw, x, Tensor(), y, {path, 0});
    } else {
      record_conv(kc, recorder, gp.pool, g, x, w, Tensor(), y, {path, 0});
    }
    recorder.submit_and_wait();
    best = std::min(
        best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

TEST(ConvBench, Paths) {
  ConvAttributes a;
  a.strides = {4};
  const ConvGeometry conv = resolve_conv({1, 48, 4096}, {96, 48, 8}, a);
  std::printf("Conv %s: direct %.2f ms, gemm %.2f ms\n", conv.describe().c_str(),
              time_ms(conv, ConvPath::direct), time_ms(conv, ConvPath::gemm));
  const ConvGeometry up = resolve_conv_transpose({1, 96, 1024}, {96, 48, 8}, a);
  std::printf("ConvTranspose %s: direct %.2f ms, gemm %.2f ms\n", up.describe().c_str(),
              time_ms(up, ConvPath::direct), time_ms(up, ConvPath::gemm));
  ConvAttributes ola;
  ola.strides = {256};
  const ConvGeometry istft = resolve_conv_transpose({4, 1024, 64}, {1024, 1, 1024}, ola);
  std::vector<float> diagonal(1024, 0.5f);
  std::printf("ConvTranspose %s: gemm %.2f ms, overlap-add %.2f ms, overlap-add checked on the GPU %.2f ms\n",
              istft.describe().c_str(), time_ms(istft, ConvPath::gemm),
              time_ms(istft, ConvPath::overlap_add, diagonal),
              time_ms(istft, ConvPath::overlap_add, std::nullopt, true));
}

}  // namespace
}  // namespace onda::test
