// Benchmarks written as gtest cases (bench/*_bench.cpp, each its own executable bench_<name>, built by
// onda_gtest_bench in bench/CMakeLists.txt): every case runs when the executable runs (no gate);
// --gtest_filter picks cases. They reuse the test harness (tests/support/harness.h) for the device and the
// float64 references. Their own flags, taken out of the command line before gtest sees it:
//   --smoke    shrunken shapes, to check the benchmark itself on a CPU adapter (timings mean nothing;
//              bench_gemm)
//   --mib N    the working-set size of the bandwidth benchmarks (bench_layout; default 256)
//   --sweep "gemm.FIELD=V gemm.FIELD=V ..."   one tuning configuration of GemmBench.TuningSweep (repeat
//              the flag for several; replaces its built-in list; bench_gemm)
//   --shapes MxNxK:FORM,...   the shapes of GemmBench.TuningSweep (FORM: B, B^T or packed; bench_gemm)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace onda::bench {

struct GtestBenchFlags {
  bool smoke = false;
  int64_t mib = 256;
  std::vector<std::string> sweep;  // each a space-separated list of tuning assignments
  std::string shapes;
};

const GtestBenchFlags& gtest_bench_flags();

}  // namespace onda::bench
