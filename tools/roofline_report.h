// `onda run --profile`'s roofline section: each op type's and node's GPU time next to its floor
// (the least time the device's measured peaks allow for its FLOPs and bytes, RunStats and
// ProfileLine), sorted by the gap between the two: the milliseconds a better kernel could recover.
#pragma once
#include <filesystem>

#include "onda/session.h"

namespace onda::cli {

// Prints the device peaks, the whole model's floor, then op types and the `top_nodes` nodes with
// the largest gaps. Nothing when the run was not profiled.
void print_roofline(const RunStats& stats, size_t top_nodes = 15);

// Every profiled node, most expensive first, as CSV (op type, node, input shapes, GPU ms, dispatches,
// floor ms, GFLOP, MB, bound): the whole profile, where the printed report keeps the top nodes. The
// file appears whole or not at all (written beside it, then renamed); throws naming it on failure.
void write_profile_csv(const RunStats& stats, const std::filesystem::path& path);

}  // namespace onda::cli
