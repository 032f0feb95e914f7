// The environment variables onda's users set, read once per process and checked: the only place the
// library reads the environment (tuning is typed: kernels/kernel_tuning.h, SessionOptions::tuning).
//   ONDA_ADAPTER=INDEX|NAME   which adapter when the options name none (gpu::ContextOptions::adapter)
//   ONDA_ROBUSTNESS=0|1       Dawn's robustness transform off / on, over the options and the default
//   ONDA_REPLAY=0|1           0: a Session records every run instead of replaying the last one
//   ONDA_DUMP_WGSL=DIR        every shader compiled is also written to DIR/NNN.wgsl (an existing folder)
//   XDG_CACHE_HOME, HOME      the per-user cache folder of the pipeline cache (blob_cache.h)
// Tests read their own (ONDA_TEST_SEED, ONDA_MODELS_DIR, ...) in tests/.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace onda::gpu {

struct UserEnvironment {
  std::string adapter;             // "" when unset
  std::optional<bool> robustness;  // unset: the options' or the adapter's default
  bool replay = true;
  std::string dump_wgsl_dir;  // "" when unset
  // $XDG_CACHE_HOME/onda/pipelines, else ~/.cache/onda/pipelines; empty when neither is set.
  std::filesystem::path pipeline_cache_folder;
};

// The variables above, read on the first call. std::invalid_argument naming the variable, its value
// and what it takes when one is malformed (then every later call throws the same).
const UserEnvironment& user_environment();

}  // namespace onda::gpu
