// Where the tests find their files, from the test binary's own location (never from paths compiled
// in), so that a build copied to another machine with its checkout (the GPU machine) finds its own:
// the build folder is the binary's (build/onda_tests, build/onda), the checkout the first folder above
// it that holds this header. ONDA_SOURCE_DIR, when set, names the checkout instead.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace onda::test {

// The folder of the running test binary (the build folder, which also holds the onda program).
inline std::filesystem::path test_binary_dir() {
  std::error_code ignored;
  return std::filesystem::read_symlink("/proc/self/exe", ignored).parent_path();
}

// The checkout the test binary was built from; empty when none is above it.
inline std::filesystem::path checkout_dir() {
  if (const char* env = std::getenv("ONDA_SOURCE_DIR"); env && *env) return env;
  std::error_code ignored;
  for (std::filesystem::path dir = test_binary_dir(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    if (std::filesystem::is_regular_file(dir / "tests/support/test_paths.h", ignored)) return dir;
  }
  return {};
}

}  // namespace onda::test
