#include "test_data.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "onda/tensor_proto.h"

namespace onda::cli {
namespace {

// DIR/<prefix>0.pb, <prefix>1.pb, ... up to the first missing index.
std::vector<std::filesystem::path> numbered_files(const std::filesystem::path& dir, const char* prefix) {
  std::vector<std::filesystem::path> files;
  for (int i = 0;; ++i) {
    const auto path = dir / fmt::format("{}{}.pb", prefix, i);
    if (!std::filesystem::exists(path)) return files;
    files.push_back(path);
  }
}

// The graph tensor a file goes to: the one it names, else the one at its index.
std::string graph_name(const std::string& file_name, size_t index, const std::vector<TensorSpec>& specs,
                       const std::filesystem::path& path, const char* what) {
  if (!file_name.empty()) {
    for (const TensorSpec& s : specs) {
      if (s.name == file_name) return s.name;
    }
    throw std::invalid_argument(fmt::format("{}: its tensor '{}' is no {} of the model", path.string(), file_name, what));
  }
  if (index >= specs.size()) {
    throw std::invalid_argument(fmt::format("{}: an unnamed tensor at index {}, but the model has {} {}s",
                                            path.string(), index, specs.size(), what));
  }
  return specs[index].name;
}

}  // namespace

TestDataSet read_test_data(const std::filesystem::path& dir, const std::vector<TensorSpec>& inputs,
                           const std::vector<TensorSpec>& outputs) {
  if (!std::filesystem::is_directory(dir)) throw std::invalid_argument(fmt::format("--test-data {}: no such folder", dir.string()));
  TestDataSet set;
  const auto input_files = numbered_files(dir, "input_");
  if (input_files.empty() && !inputs.empty()) {
    throw std::invalid_argument(fmt::format("--test-data {}: no input_0.pb (an ONNX test data set holds input_N.pb "
                                            "and output_N.pb)", dir.string()));
  }
  for (size_t i = 0; i < input_files.size(); ++i) {
    std::string name;
    HostTensor t = read_tensor_proto_file(input_files[i], &name);
    const std::string input = graph_name(name, i, inputs, input_files[i], "input");
    if (set.inputs.count(input)) throw std::invalid_argument(fmt::format("{}: input '{}' given twice", input_files[i].string(), input));
    set.inputs[input] = std::move(t);
  }
  const auto output_files = numbered_files(dir, "output_");
  for (size_t i = 0; i < output_files.size(); ++i) {
    std::string name;
    HostTensor t = read_tensor_proto_file(output_files[i], &name);
    set.expected.emplace_back(graph_name(name, i, outputs, output_files[i], "output"), std::move(t));
  }
  return set;
}

std::vector<OutputCheck> check_outputs(const std::vector<std::pair<std::string, HostTensor>>& expected,
                                       const std::map<std::string, HostTensor>& outputs, double rtol, double atol) {
  std::vector<OutputCheck> checks;
  for (const auto& [name, ref] : expected) {
    OutputCheck c;
    c.name = name;
    const auto it = outputs.find(name);
    if (it == outputs.end()) {
      c.problem = "the run did not return it";
    } else if (it->second.shape() != ref.shape()) {
      c.problem = fmt::format("shape {}, expected {}", shape_to_string(it->second.shape()), shape_to_string(ref.shape()));
    } else if (it->second.dtype() != ref.dtype()) {
      c.problem = fmt::format("dtype {}, expected {}", dtype_name(it->second.dtype()), dtype_name(ref.dtype()));
    } else {
      const std::vector<double> out = it->second.to_double(), want = ref.to_double();
      double diff2 = 0, ref2 = 0;
      size_t nan_mismatches = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i]) || std::isnan(out[i])) {
          nan_mismatches += std::isnan(want[i]) != std::isnan(out[i]);
          continue;
        }
        const double d = std::abs(out[i] - want[i]);
        if (std::isinf(want[i]) || std::isinf(out[i])) {
          if (out[i] != want[i]) c.worst = INFINITY;
          continue;
        }
        diff2 += d * d;
        ref2 += want[i] * want[i];
        c.max_abs = std::max(c.max_abs, d);
        c.worst = std::max(c.worst, d / (atol + rtol * std::abs(want[i])));
      }
      c.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
      if (nan_mismatches) {
        c.problem = fmt::format("{} elements NaN in one and not the other", nan_mismatches);
      } else if (!(c.worst <= 1.0)) {
        c.problem = fmt::format("values differ beyond atol {} + rtol {} |ref|", atol, rtol);
      }
    }
    c.passed = c.problem.empty();
    checks.push_back(c);
  }
  return checks;
}

}  // namespace onda::cli
