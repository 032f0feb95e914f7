// The recurrent kernels' environment overrides (rnn_overrides.h): well-formed values parse into the
// tiling, malformed ones throw naming the variable, "0" turns an automatic choice off.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include "expect_error.h"
#include "kernels/rnn/rnn_overrides.h"

namespace onda::test {
namespace {

using namespace kernels::rnn;

// Sets an environment variable for one scope and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(RnnOverrides, Vec4TilingParses) {
  {
    ScopedEnv env("ONDA_RNN_VEC4", "");
    EXPECT_FALSE(vec4_tiling_from_env().has_value());
  }
  {
    ScopedEnv env("ONDA_RNN_VEC4", "16,8,4,1,16,2");
    const auto t = vec4_tiling_from_env();
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
    ScopedEnv env("ONDA_RNN_VEC4", "32,8,4,1,32,2,0");
    const auto t = vec4_tiling_from_env();
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->wg_x, 32u);
    EXPECT_FALSE(t->prefetch);
    EXPECT_FALSE(t->double_buffer);
  }
  {
    ScopedEnv env("ONDA_RNN_VEC4", "32,8,4,1,32,2,2");
    const auto t = vec4_tiling_from_env();
    ASSERT_TRUE(t.has_value());
    EXPECT_TRUE(t->prefetch);
    EXPECT_TRUE(t->double_buffer);
  }
}

TEST(RnnOverrides, MalformedValuesNameTheVariable) {
  for (const char* bad : {"16,8,4,1,16", "16,8,4,1,16,2,1,9", "16,8,x,1,16,2", "16,8,4,1,16,2,",
                          "-1,8,4,1,16,2", "16;8;4;1;16;2", "16,8,4,1,16,99999999999", "16,8,4,1,16,2,3"}) {
    ScopedEnv env("ONDA_RNN_VEC4", bad);
    const std::string message = invalid_argument_message([] { vec4_tiling_from_env(); });
    EXPECT_NE(message.find("ONDA_RNN_VEC4"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("WGX,WGY,TM,NV,BK,KS"), std::string::npos) << bad << ": " << message;
  }
  {
    ScopedEnv env("ONDA_RNN_TILED", "64,4,32");
    EXPECT_NE(invalid_argument_message([] { tiled_tiling_from_env(); }).find("ONDA_RNN_TILED"),
              std::string::npos);
  }
  {
    ScopedEnv env("ONDA_RNN_STEP_KERNEL", "fast");
    EXPECT_NE(invalid_argument_message([] { resolve_step_kernel(StepKernel::automatic); }).find("'fast'"),
              std::string::npos);
  }
}

TEST(RnnOverrides, ZeroTurnsAnAutomaticChoiceOff) {
  bool disabled = false;
  {
    ScopedEnv env("ONDA_RNN_COOP", "0");
    EXPECT_FALSE(cooperative_tiling_from_env(&disabled).has_value());
    EXPECT_TRUE(disabled);
  }
  {
    ScopedEnv env("ONDA_RNN_COOP", "8,1,4,1");
    const auto t = cooperative_tiling_from_env(&disabled);
    EXPECT_FALSE(disabled);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->units, 8u);
    EXPECT_EQ(t->rows, 1u);
    EXPECT_EQ(t->slice_vectors, 4u);
    EXPECT_EQ(t->row_chunks, 1u);
  }
  {
    ScopedEnv env("ONDA_RNN_RESIDENT", "0");
    EXPECT_FALSE(resident_tiling_from_env(&disabled).has_value());
    EXPECT_TRUE(disabled);
  }
  {
    ScopedEnv env("ONDA_RNN_ROWS", "2,2,4,8,64");
    const auto t = row_tiling_from_env(&disabled);
    EXPECT_FALSE(disabled);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->k_block, 64u);
  }
  {
    ScopedEnv env("ONDA_RNN_STEP_KERNEL", "gemm");
    EXPECT_EQ(resolve_step_kernel(StepKernel::automatic), StepKernel::gemm);
    EXPECT_EQ(resolve_step_kernel(StepKernel::vec4), StepKernel::vec4);  // an explicit request wins
  }
}

}  // namespace
}  // namespace onda::test
