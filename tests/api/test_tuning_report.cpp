// onda::describe_tuning (onda/tuning.h, what `onda info` prints): every KernelTuning field is named,
// the FFT's automatic code path is resolved by the adapter's type as the FFT kernel resolves it, and
// overrides are applied or rejected as SessionOptions::tuning's are.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "onda/device.h"
#include "onda/tuning.h"

namespace onda::test {
namespace {

// The line of `field` ("fft.code_path  unrolled  (...)"); fails the test when there is none.
std::string line_of(const std::vector<std::string>& lines, const std::string& field) {
  for (const auto& line : lines)
    if (line.rfind(field + " ", 0) == 0) return line;
  ADD_FAILURE() << "no line for " << field;
  return "";
}

// The value column of a line: the word after the field name.
std::string value_of(const std::string& line) {
  std::istringstream words(line);
  std::string field, value;
  words >> field >> value;
  return value;
}

TEST(TuningReport, NamesEveryFieldAndResolvesTheFftPathForTheAdapter) {
  const auto device = Device::open();
  const std::vector<std::string> lines = describe_tuning(*device);
  for (const char* field : {"fft.code_path",      "fft.real_split_pairs",
                            "fft.radices",        "fft.threads",
                            "fft.per_group",      "fft.group_iterations",
                            "gemm.for_unroll",    "gemm.tile",
                            "gemm.double_buffer", "gemm.vec_store",
                            "gemm.unroll_k",      "conv.implicit_gemm",
                            "attention.key_splits",
                            "rnn.step_kernel",    "rnn.resident",
                            "rnn.cooperative",    "rnn.rows",
                            "rnn.tiled",          "rnn.vec4"})
    line_of(lines, field);
  // Automatic: generic shaders on CPU adapters, unrolled on GPUs (fft_kernel.cpp's resolve_code_path).
  const bool cpu = device->adapter().type == "CPU";
  const std::string code_path = line_of(lines, "fft.code_path");
  EXPECT_EQ(value_of(code_path), cpu ? "generic" : "unrolled") << code_path;
  EXPECT_NE(code_path.find("(automatic"), std::string::npos) << code_path;
  EXPECT_EQ(value_of(line_of(lines, "conv.implicit_gemm")), "1");
  EXPECT_EQ(value_of(line_of(lines, "rnn.step_kernel")), "automatic");
  EXPECT_EQ(value_of(line_of(lines, "attention.key_splits")), "automatic");
}

TEST(TuningReport, AppliesOverridesAndRejectsMalformedOnes) {
  const auto device = Device::open();
  const std::vector<std::string> lines = describe_tuning(
      *device,
      {"fft.code_path=unrolled", "conv.implicit_gemm=0", "rnn.resident=0", "attention.key_splits=3"});
  const std::string code_path = line_of(lines, "fft.code_path");
  EXPECT_EQ(value_of(code_path), "unrolled") << code_path;
  EXPECT_EQ(code_path.find("(automatic"), std::string::npos) << code_path;
  EXPECT_EQ(value_of(line_of(lines, "conv.implicit_gemm")), "0");
  EXPECT_EQ(value_of(line_of(lines, "rnn.resident")), "off");
  EXPECT_EQ(value_of(line_of(lines, "attention.key_splits")), "3");
  EXPECT_THROW(describe_tuning(*device, {"fft.code_path=fast"}), std::invalid_argument);
  EXPECT_THROW(describe_tuning(*device, {"nothing"}), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
