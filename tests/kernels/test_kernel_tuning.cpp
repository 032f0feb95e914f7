// The kernel families' tuning as text (kernels::set_tuning, what the benchmarks' --tuning takes): the
// FFT, GEMM and conv fields parse, and a malformed assignment throws naming the field and the
// expected form. (The RNN fields: rnn/test_rnn_tuning.cpp.)
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kernels/kernel_tuning.h"

namespace onda::test {
namespace {

using kernels::KernelTuning;

KernelTuning tuned(std::initializer_list<const char*> assignments) {
  KernelTuning tuning;
  for (const char* a : assignments) kernels::set_tuning(tuning, a);
  return tuning;
}

TEST(KernelTuning, DefaultsLeaveTheAutomaticRules) {
  const KernelTuning& t = kernels::default_kernel_tuning();
  EXPECT_EQ(t.fft.code_path, kernels::fft::FftCodePath::automatic);
  EXPECT_EQ(t.fft.real_split_pairs, kernels::fft::RealSplitPairs::by_length);
  EXPECT_TRUE(t.fft.radices.empty());
  EXPECT_EQ(t.rnn.step_kernel, kernels::rnn::StepKernel::automatic);
  EXPECT_FALSE(t.gemm.for_unroll);
  EXPECT_FALSE(t.gemm.tile);
  EXPECT_FALSE(t.gemm.double_buffer);
  EXPECT_FALSE(t.gemm.vec_store);
  EXPECT_FALSE(t.gemm.unroll_k);
  EXPECT_TRUE(t.conv.implicit_gemm);
  EXPECT_EQ(t.attention.key_splits, 0u);
}

TEST(KernelTuning, FieldsParse) {
  const KernelTuning t =
      tuned({"fft.code_path=generic", "fft.real_split_pairs=every_pass", "fft.radices=8,8,16",
             "fft.threads=64", "fft.per_group=2", "fft.group_iterations=4", "gemm.for_unroll=1",
             "conv.implicit_gemm=0", "gemm.tile=16,16,8,16,2,8", "gemm.double_buffer=1", "gemm.vec_store=1",
             "gemm.unroll_k=0", "attention.key_splits=4"});
  EXPECT_EQ(t.fft.code_path, kernels::fft::FftCodePath::generic);
  EXPECT_EQ(t.fft.real_split_pairs, kernels::fft::RealSplitPairs::every_pass);
  EXPECT_EQ(t.fft.radices, (std::vector<int>{8, 8, 16}));
  EXPECT_EQ(t.fft.threads, 64);
  EXPECT_EQ(t.fft.per_group, 2);
  EXPECT_EQ(t.fft.group_iterations, 4);
  EXPECT_TRUE(t.gemm.for_unroll);
  EXPECT_FALSE(t.conv.implicit_gemm);
  EXPECT_EQ(t.gemm.tile, (kernels::gemm::GemmTile{16, 16, 8, 16, 2, 8}));
  EXPECT_TRUE(t.gemm.double_buffer);
  EXPECT_TRUE(t.gemm.vec_store);
  EXPECT_EQ(t.gemm.unroll_k, false);
  EXPECT_EQ(t.attention.key_splits, 4u);
  EXPECT_FALSE(tuned({"gemm.tile=16,16,8,16,2,8", "gemm.tile=0"}).gemm.tile);
}

TEST(KernelTuning, MalformedAssignmentsNameTheField) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"fft.code_path=fast", "fft.code_path"},
      {"fft.radices=8,1", "fft.radices"},
      {"fft.threads=-3", "fft.threads"},
      {"gemm.for_unroll=yes", "gemm.for_unroll"},
      {"conv.implicit_gemm=2", "conv.implicit_gemm"},
      {"attention.key_splits=-1", "attention.key_splits"},
      {"attention.kernel=rows", "attention.kernel"},  // the tiled kernel and its knob are gone
      {"gemm.nv=2", "gemm.nv"},
      {"gemm.tile=16,16,8", "gemm.tile"},
      {"gemm.double_buffer=2", "gemm.double_buffer"},
      {"fft.code_path", "fft.code_path"},
      {"code_path=generic", "code_path=generic"}};
  for (const auto& [assignment, named] : cases) {
    const std::string message = invalid_argument_message([&] { tuned({assignment}); });
    EXPECT_NE(message.find(named), std::string::npos) << assignment << ": " << message;
  }
}

}  // namespace
}  // namespace onda::test
