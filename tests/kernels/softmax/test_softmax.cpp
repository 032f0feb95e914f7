// Softmax and LogSoftmax along every axis (rows in registers, in a subgroup, across a workgroup, and
// read twice when longer), f32 and f16, against float64.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/softmax/softmax_kernel.h"

namespace onda::test {
namespace {

TEST(Softmax, EveryAxisBothKinds) {
  Random rng(test_seed());
  for (bool log_softmax : {false, true}) {
    for (DType dtype : {DType::f32, DType::f16}) {
      double worst = 0;
      for (const auto& [shape, axis] : std::vector<std::pair<Shape, int64_t>>{
               {{5}, 0}, {{3, 7}, -1}, {{3, 7}, 0}, {{2, 3, 1000}, 2}, {{2, 5, 3, 4}, 1}, {{4, 3000}, 1},
               // Rows in registers: 1 to 256 invocations per row (shuffles within a subgroup, a tree in
               // workgroup memory beyond), rows past the last in a workgroup; 4097 reads twice again.
               {{5, 1}, 1}, {{1000, 16}, 1}, {{300, 17}, -1}, {{33, 64}, 1}, {{2, 19, 321}, 2}, {{7, 4096}, 1},
               {{3, 4097}, 1}}) {
        auto x = round_to_dtype(rng.normal(element_count(shape), 0.0, 3.0), dtype);
        Tensor tx = upload_floats(x, dtype, shape);
        Tensor ty = poisoned(dtype, shape);
        gpu::CommandRecorder recorder(gpu().context);
        kernels::record_softmax({gpu().context, gpu().pipelines}, recorder, tx, axis, log_softmax, ty);
        recorder.submit_and_wait();
        const int64_t a = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < a; ++d) outer *= shape[d];
        for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
        std::vector<double> ref(x.size());
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < shape[a]; ++k) m = std::max(m, double(x[(o * shape[a] + k) * inner + i]));
            for (int64_t k = 0; k < shape[a]; ++k) s += std::exp(x[(o * shape[a] + k) * inner + i] - m);
            for (int64_t k = 0; k < shape[a]; ++k) {
              const int64_t idx = (o * shape[a] + k) * inner + i;
              ref[idx] = log_softmax ? x[idx] - m - std::log(s) : std::exp(x[idx] - m) / s;
            }
          }
        }
        const double e = rel_l2(ty.download_floats(gpu().context), ref);
        EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3) << shape_string(shape) << " axis " << axis;
        worst = std::max(worst, e);
      }
      std::printf("%s %s rel L2 %.2e\n", log_softmax ? "LogSoftmax" : "Softmax", std::string(dtype_name(dtype)).c_str(), worst);
    }
  }
}

}  // namespace
}  // namespace onda::test
