#include "gpu/environment.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace onda::gpu {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// "0" / "1"; nullopt when unset or empty.
std::optional<bool> switch_variable(const char* name) {
  const std::string value = variable(name);
  if (value.empty()) return std::nullopt;
  if (value == "0" || value == "1") return value == "1";
  throw std::invalid_argument(fmt::format("{} is '{}', expected 0 or 1", name, value));
}

UserEnvironment read_environment() {
  UserEnvironment env;
  env.adapter = variable("ONDA_ADAPTER");
  env.robustness = switch_variable("ONDA_ROBUSTNESS");
  env.replay = switch_variable("ONDA_REPLAY").value_or(true);
  env.dump_wgsl_dir = variable("ONDA_DUMP_WGSL");
  if (!env.dump_wgsl_dir.empty() && !std::filesystem::is_directory(env.dump_wgsl_dir)) {
    throw std::invalid_argument(
        fmt::format("ONDA_DUMP_WGSL is '{}', expected an existing folder", env.dump_wgsl_dir));
  }
  if (const std::string xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) {
    env.pipeline_cache_folder = std::filesystem::path(xdg) / "onda" / "pipelines";
  } else if (const std::string home = variable("HOME"); !home.empty()) {
    env.pipeline_cache_folder = std::filesystem::path(home) / ".cache" / "onda" / "pipelines";
  }
  return env;
}

}  // namespace

const UserEnvironment& user_environment() {
  static const UserEnvironment env = read_environment();
  return env;
}

}  // namespace onda::gpu
