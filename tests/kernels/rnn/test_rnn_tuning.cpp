// The recurrent kernels' tuning as text (kernels::set_tuning, what bench_rnn --tuning takes):
// well-formed values parse into the tiling, malformed ones throw naming the field and the expected
// form, "0" turns an automatic choice off. (plan_rnn's use of RnnTuning: test_rnn_plan.cpp.)
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "expect_error.h"
#include "kernels/kernel_tuning.h"

namespace onda::test {
namespace {

using namespace kernels::rnn;

RnnTuning tuned(const std::string& assignment) {
  kernels::KernelTuning tuning;
  kernels::set_tuning(tuning, assignment);
  return tuning.rnn;
}

TEST(RnnTuning, Vec4TilingParses) {
  EXPECT_FALSE(kernels::KernelTuning{}.rnn.vec4.has_value());
  {
    const auto t = tuned("rnn.vec4=16,8,4,1,16,2").vec4;
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->wg_x, 16u);
    EXPECT_EQ(t->wg_y, 8u);
    EXPECT_EQ(t->thread_rows, 4u);
    EXPECT_EQ(t->thread_units, 1u);
    EXPECT_EQ(t->k_tile, 16u);
    EXPECT_EQ(t->k_split, 2u);
    EXPECT_TRUE(t->prefetch);
  }
  {
    const auto t = tuned("rnn.vec4=32,8,4,1,32,2,0").vec4;
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->wg_x, 32u);
    EXPECT_FALSE(t->prefetch);
    EXPECT_FALSE(t->double_buffer);
  }
  {
    const auto t = tuned("rnn.vec4=32,8,4,1,32,2,2").vec4;
    ASSERT_TRUE(t.has_value());
    EXPECT_TRUE(t->prefetch);
    EXPECT_TRUE(t->double_buffer);
  }
}

TEST(RnnTuning, MalformedValuesNameTheField) {
  for (const char* bad :
       {"16,8,4,1,16", "16,8,4,1,16,2,1,9", "16,8,x,1,16,2", "16,8,4,1,16,2,", "-1,8,4,1,16,2",
        "16;8;4;1;16;2", "16,8,4,1,16,99999999999", "16,8,4,1,16,2,3", ""}) {
    const std::string message = invalid_argument_message([&] { tuned(std::string("rnn.vec4=") + bad); });
    EXPECT_NE(message.find("rnn.vec4"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("WGX,WGY,TM,NV,BK,KS"), std::string::npos) << bad << ": " << message;
  }
  EXPECT_NE(invalid_argument_message([] { tuned("rnn.tiled=64,4,32"); }).find("rnn.tiled"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { tuned("rnn.step_kernel=fast"); }).find("'fast'"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { tuned("rnn.vec5=1"); }).find("rnn.vec5"), std::string::npos);
}

TEST(RnnTuning, ZeroTurnsAnAutomaticChoiceOff) {
  {
    const RnnTuning t = tuned("rnn.cooperative=0");
    EXPECT_FALSE(t.cooperative.has_value());
    EXPECT_TRUE(t.cooperative_off);
  }
  {
    const RnnTuning t = tuned("rnn.cooperative=8,1,4,1");
    EXPECT_FALSE(t.cooperative_off);
    ASSERT_TRUE(t.cooperative.has_value());
    EXPECT_EQ(t.cooperative->units, 8u);
    EXPECT_EQ(t.cooperative->rows, 1u);
    EXPECT_EQ(t.cooperative->slice_vectors, 4u);
    EXPECT_EQ(t.cooperative->row_chunks, 1u);
  }
  {
    const RnnTuning t = tuned("rnn.resident=0");
    EXPECT_FALSE(t.resident.has_value());
    EXPECT_TRUE(t.resident_off);
  }
  {
    const RnnTuning t = tuned("rnn.rows=2,2,4,8,64");
    EXPECT_FALSE(t.rows_off);
    ASSERT_TRUE(t.rows.has_value());
    EXPECT_EQ(t.rows->k_block, 64u);
  }
  EXPECT_EQ(tuned("rnn.step_kernel=gemm").step_kernel, StepKernel::gemm);
}

}  // namespace
}  // namespace onda::test
