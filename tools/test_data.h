// ONNX test data sets: a folder of input_N.pb and output_N.pb (ONNX's backend node tests, the model zoo's
// test_data_set_N) as the inputs of `onda run --test-data DIR`, and the check of the run's outputs
// against the expected ones with ONNX's own criterion (numpy.testing.assert_allclose: |out - ref| <=
// atol + rtol |ref| elementwise, NaN equal to NaN).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onda/session.h"

namespace onda::cli {

struct TestDataSet {
  std::map<std::string, HostTensor> inputs;                 // by graph input name
  std::vector<std::pair<std::string, HostTensor>> expected;  // (graph output name, tensor), in file order
};

// Reads DIR/input_0.pb, input_1.pb, ... and DIR/output_0.pb, ...: a file whose tensor names a graph input
// (output) goes to it, an unnamed one to the graph input (output) at its index. std::invalid_argument when
// the folder has no input files, a file names no graph tensor, or the counts do not fit the graph.
TestDataSet read_test_data(const std::filesystem::path& dir, const std::vector<TensorSpec>& inputs,
                           const std::vector<TensorSpec>& outputs);

struct OutputCheck {
  std::string name;
  bool passed = false;
  std::string problem;   // when not passed: what differs (shape, dtype, missing output, values)
  double rel_l2 = 0;     // ||out - ref|| / ||ref|| (0 when both are zero)
  double max_abs = 0;    // max |out - ref|
  double worst = 0;      // max |out - ref| / (atol + rtol |ref|): <= 1 passes
};

// One check per expected output.
std::vector<OutputCheck> check_outputs(const std::vector<std::pair<std::string, HostTensor>>& expected,
                                       const std::map<std::string, HostTensor>& outputs, double rtol, double atol);

}  // namespace onda::cli
