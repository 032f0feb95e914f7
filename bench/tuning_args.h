// The benchmarks' --tuning argument: every "--tuning family.field=value" of the command line applied
// to the defaults (kernels::set_tuning lists the fields), e.g.
//   build/bench_rnn --tuning rnn.step_kernel=vec4 --tuning rnn.vec4=16,8,4,1,16,2
//   build/bench_fft --tuning fft.radices=8,8,16,8
// A malformed one prints the error and exits with status 1.
#pragma once
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/kernel_tuning.h"

namespace onda::bench {

inline kernels::KernelTuning tuning_from_args(int argc, char** argv) {
  kernels::KernelTuning tuning;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--tuning") continue;
    if (i + 1 >= argc) {
      fmt::print(stderr, "--tuning needs family.field=value\n");
      std::exit(1);
    }
    try {
      kernels::set_tuning(tuning, argv[++i]);
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "{}\n", e.what());
      std::exit(1);
    }
  }
  return tuning;
}

}  // namespace onda::bench
