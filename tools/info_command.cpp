#include <fmt/format.h>

#include <memory>
#include <string>

#include "commands.h"
#include "gpu/context.h"

namespace onda::cli {
namespace {

void print_info(const std::string& adapter_choice, bool list) {
  if (list) {
    for (const auto& d : gpu::Context::list_adapters()) {
      fmt::print("[{}] {} ({}, {}, driver {})\n", d.index, d.name, d.backend, d.type, d.driver);
    }
    return;
  }
  gpu::ContextOptions options;
  options.adapter = adapter_choice;
  gpu::Context context(options);
  const auto& d = context.adapter_description();
  const auto& l = context.limits();
  fmt::print("adapter:      {}\n", d.name);
  fmt::print("vendor:       {} (0x{:04x}), device 0x{:04x}, architecture '{}'\n", d.vendor, d.vendor_id,
             d.device_id, d.architecture);
  fmt::print("backend:      {} ({})\n", d.backend, d.type);
  fmt::print("driver:       {}\n", d.driver);
  fmt::print("subgroups:    {}..{}\n", context.subgroup_min_size(), context.subgroup_max_size());
  std::string features;
  for (auto f : context.features()) features += std::string(features.empty() ? "" : ", ") + std::string(gpu::feature_name(f));
  fmt::print("features:     {}\n", features.empty() ? "(none)" : features);
  fmt::print("limits:\n");
  fmt::print("  maxBufferSize                     {}\n", l.maxBufferSize);
  fmt::print("  maxStorageBufferBindingSize       {}\n", l.maxStorageBufferBindingSize);
  fmt::print("  maxStorageBuffersPerShaderStage   {}\n", l.maxStorageBuffersPerShaderStage);
  fmt::print("  maxUniformBufferBindingSize       {}\n", l.maxUniformBufferBindingSize);
  fmt::print("  minStorageBufferOffsetAlignment   {}\n", l.minStorageBufferOffsetAlignment);
  fmt::print("  minUniformBufferOffsetAlignment   {}\n", l.minUniformBufferOffsetAlignment);
  fmt::print("  maxComputeWorkgroupStorageSize    {}\n", l.maxComputeWorkgroupStorageSize);
  fmt::print("  maxComputeInvocationsPerWorkgroup {}\n", l.maxComputeInvocationsPerWorkgroup);
  fmt::print("  maxComputeWorkgroupSize           {} x {} x {}\n", l.maxComputeWorkgroupSizeX,
             l.maxComputeWorkgroupSizeY, l.maxComputeWorkgroupSizeZ);
  fmt::print("  maxComputeWorkgroupsPerDimension  {}\n", l.maxComputeWorkgroupsPerDimension);
}

}  // namespace

std::string default_adapter_line() {
  try {
    gpu::Context context(gpu::ContextOptions{});
    const auto& d = context.adapter_description();
    return fmt::format("{} ({}, driver {})", d.name, d.backend, d.driver);
  } catch (const std::exception& e) {
    return fmt::format("none ({})", e.what());
  }
}

void add_info_command(CLI::App& app) {
  auto* command = app.add_subcommand("info", "Print the WebGPU adapter, backend, driver, limits and features");
  auto adapter = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  command->add_option("--adapter", *adapter, "Adapter index or name substring (default: ONDA_ADAPTER, else the "
                                             "high-performance adapter)");
  command->add_flag("--list", *list, "List every adapter instead");
  command->callback([adapter, list] { print_info(*adapter, *list); });
}

}  // namespace onda::cli
