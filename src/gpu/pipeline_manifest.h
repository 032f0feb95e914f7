// A pipeline manifest: the pipelines one model's runs created (key, label, WGSL text), kept on disk
// beside Dawn's blob cache so that the next process that opens the model can create them all up
// front, on worker threads (pipeline_prefetch.h), instead of one by one while it records its first
// run. Dawn's blob cache makes each creation cheaper; the manifest makes them happen ahead of use.
//
// A manifest is only a hint. Its entries are checked when used: a pipeline made from it serves a key
// only if the WGSL the kernel renders now is the manifest's text, byte for byte (PipelineCache::get),
// so a stale manifest (another onda, another tuning) costs wasted compiles, never a wrong pipeline.
// The file names its identity (model, adapter, driver, onda version: the caller's string) and ends
// with a checksum of everything before it: a file of another identity, a truncated or corrupted one
// reads as no manifest. Writes go to a temporary file of a unique name that is renamed into place,
// so concurrent writers (processes or threads) leave one whole manifest, never a mix.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu/pipeline_key.h"

namespace onda::gpu {

struct PipelineManifestEntry {
  PipelineKey key;
  std::string label;
  std::string wgsl;
};

// Limits a manifest never exceeds (a file that claims more is corrupt): its writer keeps the first
// entries within them (a manifest lists them in the order a run needs them).
inline constexpr size_t kMaxManifestEntries = 4096;
inline constexpr size_t kMaxManifestBytes = size_t{64} << 20;

// The entries of the manifest at `path` if it is whole and names `identity`; empty otherwise (no
// file, another identity, truncated, corrupted: never an exception).
std::vector<PipelineManifestEntry> read_pipeline_manifest(const std::filesystem::path& path,
                                                          const std::string& identity);

// Writes `entries` (the first, within the limits above) as the manifest at `path`, creating its folder;
// false (and nothing left behind) when the folder or file cannot be written.
bool write_pipeline_manifest(const std::filesystem::path& path, const std::string& identity,
                             const std::vector<PipelineManifestEntry>& entries);

// The manifest file of `identity` in `folder` (a name derived from a hash of the identity).
std::filesystem::path pipeline_manifest_path(const std::filesystem::path& folder,
                                             const std::string& identity);

}  // namespace onda::gpu
