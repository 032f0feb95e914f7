#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "onda/device.h"
#include "onda/tuning.h"

namespace onda::cli {
namespace {

void print_info(const std::string& adapter_choice, bool list, const std::vector<std::string>& tuning) {
  if (list) {
    for (const auto& d : Device::list_adapters()) {
      fmt::print("[{}] {} ({}, {}, driver {})\n", d.index, d.name, d.backend, d.type, d.driver);
    }
    return;
  }
  DeviceOptions options;
  options.adapter = adapter_choice;
  const auto device = Device::open(options);
  // Before printing anything: a malformed --tuning is a one-line error (exit 1).
  const std::vector<std::string> tuning_lines = describe_tuning(*device, tuning);
  const auto& d = device->adapter();
  const auto& l = device->limits();
  fmt::print("adapter:      {}\n", d.name);
  fmt::print("vendor:       {} (0x{:04x}), device 0x{:04x}, architecture '{}'\n", d.vendor, d.vendor_id,
             d.device_id, d.architecture);
  fmt::print("backend:      {} ({})\n", d.backend, d.type);
  fmt::print("driver:       {}\n", d.driver);
  fmt::print("subgroups:    {}..{}\n", l.subgroup_min_size, l.subgroup_max_size);
  std::string features;
  for (const auto& f : device->features()) features += (features.empty() ? "" : ", ") + f;
  fmt::print("features:     {}\n", features.empty() ? "(none)" : features);
  fmt::print("limits:\n");
  fmt::print("  maxBufferSize                     {}\n", l.max_buffer_size);
  fmt::print("  maxStorageBufferBindingSize       {}\n", l.max_storage_buffer_binding_size);
  fmt::print("  maxStorageBuffersPerShaderStage   {}\n", l.max_storage_buffers_per_shader_stage);
  fmt::print("  maxUniformBufferBindingSize       {}\n", l.max_uniform_buffer_binding_size);
  fmt::print("  minStorageBufferOffsetAlignment   {}\n", l.min_storage_buffer_offset_alignment);
  fmt::print("  minUniformBufferOffsetAlignment   {}\n", l.min_uniform_buffer_offset_alignment);
  fmt::print("  maxComputeWorkgroupStorageSize    {}\n", l.max_compute_workgroup_storage_size);
  fmt::print("  maxComputeInvocationsPerWorkgroup {}\n", l.max_compute_invocations_per_workgroup);
  fmt::print("  maxComputeWorkgroupSize           {} x {} x {}\n", l.max_compute_workgroup_size[0],
             l.max_compute_workgroup_size[1], l.max_compute_workgroup_size[2]);
  fmt::print("  maxComputeWorkgroupsPerDimension  {}\n", l.max_compute_workgroups_per_dimension);
  // What a Session on this adapter uses (onda run --tuning / SessionOptions::tuning change it).
  fmt::print("kernel tuning:\n");
  for (const auto& line : tuning_lines) fmt::print("  {}\n", line);
}

}  // namespace

std::string default_adapter_line() {
  try {
    const auto device = Device::open();
    const auto& d = device->adapter();
    return fmt::format("{} ({}, driver {})", d.name, d.backend, d.driver);
  } catch (const std::exception& e) {
    return fmt::format("none ({})", e.what());
  }
}

void add_info_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "info", "Print the WebGPU adapter, backend, driver, limits, features and kernel tuning");
  auto adapter = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto tuning = std::make_shared<std::vector<std::string>>();
  command->add_option("--adapter", *adapter,
                      "Adapter index or name substring (default: ONDA_ADAPTER, else the "
                      "high-performance adapter)");
  command->add_flag("--list", *list, "List every adapter instead");
  command->add_option(
      "--tuning", *tuning,
      "Show the kernel tuning with this override, family.field=value (as onda run); repeatable");
  command->callback([adapter, list, tuning] { print_info(*adapter, *list, *tuning); });
}

}  // namespace onda::cli
