// The kernel tuning a Session uses on a device, as text: which FFT shaders, which GEMM and conv
// variants, which recurrent kernels (docs/architecture.md, "Tuning and the environment").
//
//   for (const auto& line : onda::describe_tuning(*onda::Device::open())) std::puts(line.c_str());
#pragma once
#include <string>
#include <vector>

#include "onda/device.h"

namespace onda {

// One line per tuning field, "family.field  value  (why)": the defaults with `overrides` applied (the
// "family.field=value" forms of SessionOptions::tuning), an automatic choice that the device alone
// decides resolved for this adapter (fft.code_path), one that the shapes decide named with its rule.
// A malformed override is a std::invalid_argument naming the field and the expected form.
std::vector<std::string> describe_tuning(const Device& device,
                                         const std::vector<std::string>& overrides = {});

}  // namespace onda
