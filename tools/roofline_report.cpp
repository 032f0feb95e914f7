#include "roofline_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace onda::cli {
namespace {

// A group of profile lines (one node, or every node of an op type) against its floor.
struct Row {
  std::string name, detail;
  double gpu_ms = 0, floor_ms = 0, flops = 0, bytes = 0, latency_floor_ms = 0;
  bool all_modeled = true;
};

// Which of the floor's terms is the largest: what bounds the node at best.
std::string bound(const Row& row, const RunStats& stats) {
  if (!row.all_modeled && row.flops == 0) return "bytes?";
  const double compute = stats.peak_flops_per_second > 0 ? 1e3 * row.flops / stats.peak_flops_per_second : 0;
  const double memory = stats.peak_bytes_per_second > 0 ? 1e3 * row.bytes / stats.peak_bytes_per_second : 0;
  if (row.latency_floor_ms >= std::max(compute, memory) && row.latency_floor_ms > 0) return "latency";
  return compute >= memory ? "compute" : "memory";
}

void print_row(const Row& row, const RunStats& stats) {
  fmt::print("  {:<24} {:>10.3f} {:>10.3f} {:>10.3f} {:>6.1f}% {:>10.4g} {:>10.4g}  {:<8} {}\n", row.name,
             row.gpu_ms, row.floor_ms, std::max(0.0, row.gpu_ms - row.floor_ms),
             row.gpu_ms > 0 ? 100 * row.floor_ms / row.gpu_ms : 0.0, row.flops * 1e-9, row.bytes / 1e6,
             bound(row, stats), row.detail);
}

void print_header(const char* first) {
  fmt::print("  {:<24} {:>10} {:>10} {:>10} {:>7} {:>10} {:>10}  {:<8}\n", first, "GPU ms", "floor ms",
             "gap ms", "% floor", "GFLOP", "MB", "bound");
}

// A CSV field: quoted, inner quotes doubled (node names and shape lists hold commas).
std::string csv_field(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

void write_profile_csv(const RunStats& stats, const std::filesystem::path& path) {
  std::filesystem::path partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("--profile-csv: cannot write '{}'", path.string()));
    out << "op_type,node,input_shapes,gpu_ms,dispatches,floor_ms,gflop,mb,bound\n";
    for (const ProfileLine& line : stats.profile) {
      const Row row{line.op_type, "", line.gpu_ms, line.floor_ms, line.flops, line.bytes, line.latency_floor_ms,
                    line.cost_modeled};
      out << fmt::format("{},{},{},{:.4f},{},{:.4f},{:.6g},{:.6g},{}\n", csv_field(line.op_type),
                         csv_field(line.node), csv_field(line.input_shapes), line.gpu_ms, line.dispatches,
                         line.floor_ms, line.flops * 1e-9, line.bytes / 1e6, bound(row, stats));
    }
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(partial);
      throw std::runtime_error(fmt::format("--profile-csv: writing '{}' failed", path.string()));
    }
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::filesystem::remove(partial);
    throw std::runtime_error(fmt::format("--profile-csv: cannot write '{}': {}", path.string(), error.message()));
  }
}

void print_roofline(const RunStats& stats, size_t top_nodes) {
  if (stats.profile.empty()) return;
  std::map<std::string, Row> by_type;
  std::vector<Row> nodes;
  double gpu_total = 0;
  for (const ProfileLine& line : stats.profile) {
    Row node{line.op_type,
             line.node + "  " + line.input_shapes,
             line.gpu_ms,
             line.floor_ms,
             line.flops,
             line.bytes,
             line.latency_floor_ms,
             line.cost_modeled};
    if (line.sequential_steps > 0) node.detail += fmt::format("  ({} time steps)", line.sequential_steps);
    nodes.push_back(node);
    Row& type = by_type[line.op_type];
    type.name = line.op_type;
    type.gpu_ms += line.gpu_ms;
    type.floor_ms += line.floor_ms;
    type.flops += line.flops;
    type.bytes += line.bytes;
    type.latency_floor_ms += line.latency_floor_ms;
    type.all_modeled = type.all_modeled && line.cost_modeled;
    gpu_total += line.gpu_ms;
  }
  auto by_gap = [](const Row& a, const Row& b) { return a.gpu_ms - a.floor_ms > b.gpu_ms - b.floor_ms; };
  std::vector<Row> types;
  for (auto& [name, row] : by_type) types.push_back(row);
  std::sort(types.begin(), types.end(), by_gap);
  std::sort(nodes.begin(), nodes.end(), by_gap);

  fmt::print(
      "roofline: device peaks FP32 {:.3g} TFLOP/s, copy {:.4g} GB/s (read + write), dependent dispatch "
      "{:.1f} us\n",
      stats.peak_flops_per_second * 1e-12, stats.peak_bytes_per_second * 1e-9,
      stats.dependent_dispatch_ms * 1e3);
  fmt::print(
      "  floor = max(FLOPs / FP32 peak, bytes / copy peak, recurrent steps x dependent dispatch); "
      "% floor = floor / GPU time\n");
  fmt::print("whole model: GPU {:.3f} ms, floor {:.3f} ms ({:.1f}% of floor, gap {:.3f} ms)\n", gpu_total,
             stats.profile_floor_ms, gpu_total > 0 ? 100 * stats.profile_floor_ms / gpu_total : 0.0,
             std::max(0.0, gpu_total - stats.profile_floor_ms));
  fmt::print("per op type, largest gap first:\n");
  print_header("op type");
  for (const Row& row : types) print_row(row, stats);
  fmt::print("nodes with the largest gaps:\n");
  print_header("op type");
  for (size_t i = 0; i < std::min(top_nodes, nodes.size()); ++i) print_row(nodes[i], stats);
}

}  // namespace onda::cli
