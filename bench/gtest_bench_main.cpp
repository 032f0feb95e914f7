// main of the gtest-based benchmarks (gtest_bench.h): their own flags out, then gtest's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest_bench.h"

namespace onda::bench {

GtestBenchFlags g_flags;  // set by main

const GtestBenchFlags& gtest_bench_flags() {
  return g_flags;
}

}  // namespace onda::bench

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--smoke") {
      onda::bench::g_flags.smoke = true;
    } else if (a == "--mib" && i + 1 < argc) {
      char* end = nullptr;
      onda::bench::g_flags.mib = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || onda::bench::g_flags.mib <= 0) {
        fmt::print(stderr, "--mib takes a positive number of MiB, not '{}'\n", argv[i]);
        return 1;
      }
    } else if (a == "--sweep" && i + 1 < argc) {
      onda::bench::g_flags.sweep.push_back(argv[++i]);
    } else if (a == "--shapes" && i + 1 < argc) {
      onda::bench::g_flags.shapes = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  testing::InitGoogleTest(&rest_count, rest.data());
  return RUN_ALL_TESTS();
}
