#include "gpu/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <tuple>

#include "gpu/environment.h"
#include "gpu/gpu_error.h"
#include "gpu/run_guards.h"

namespace onda::gpu {
namespace {

// Toggles for every instance/adapter/device: experimental features (subgroup matrices) need
// allow_unsafe_apis; exact GPU timestamps need timestamp quantization off.
const char* const kEnabledToggles[] = {"allow_unsafe_apis"};
// Dawn's robustness transform is turned off by *enabling* its "disable_robustness" toggle (listing it
// among the disabled toggles leaves robustness on either way).
const char* const kEnabledTogglesNoRobustness[] = {"allow_unsafe_apis", "disable_robustness"};
const char* const kDisabledToggles[] = {"timestamp_quantization"};

wgpu::DawnTogglesDescriptor make_toggles(bool robustness) {
  wgpu::DawnTogglesDescriptor toggles;
  toggles.enabledToggleCount =
      robustness ? std::size(kEnabledToggles) : std::size(kEnabledTogglesNoRobustness);
  toggles.enabledToggles = robustness ? kEnabledToggles : kEnabledTogglesNoRobustness;
  toggles.disabledToggleCount = std::size(kDisabledToggles);
  toggles.disabledToggles = kDisabledToggles;
  return toggles;
}

const char* backend_name(wgpu::BackendType type) {
  switch (type) {
    case wgpu::BackendType::Null:
      return "Null";
    case wgpu::BackendType::WebGPU:
      return "WebGPU";
    case wgpu::BackendType::D3D11:
      return "D3D11";
    case wgpu::BackendType::D3D12:
      return "D3D12";
    case wgpu::BackendType::Metal:
      return "Metal";
    case wgpu::BackendType::Vulkan:
      return "Vulkan";
    case wgpu::BackendType::OpenGL:
      return "OpenGL";
    case wgpu::BackendType::OpenGLES:
      return "OpenGLES";
    default:
      return "unknown";
  }
}

const char* adapter_type_name(wgpu::AdapterType type) {
  switch (type) {
    case wgpu::AdapterType::DiscreteGPU:
      return "discrete GPU";
    case wgpu::AdapterType::IntegratedGPU:
      return "integrated GPU";
    case wgpu::AdapterType::CPU:
      return "CPU";
    default:
      return "unknown";
  }
}

wgpu::Instance make_instance() {
  static const wgpu::InstanceFeatureName kTimedWaitAny = wgpu::InstanceFeatureName::TimedWaitAny;
  wgpu::DawnTogglesDescriptor toggles = make_toggles(true);
  wgpu::InstanceDescriptor descriptor;
  descriptor.nextInChain = &toggles;
  descriptor.requiredFeatureCount = 1;
  descriptor.requiredFeatures = &kTimedWaitAny;
  wgpu::Instance instance = wgpu::CreateInstance(&descriptor);
  if (!instance) throw GpuError("could not create a WebGPU (Dawn) instance");
  return instance;
}

// One Dawn instance for the process, never destroyed: with an instance per Context, the last
// Context's end unloaded the Vulkan driver and the next Context loaded it again, and NVIDIA's driver
// (libnvidia-tls, initial-exec TLS) then failed to load ("cannot allocate memory in static TLS
// block": no adapter) after a few cycles. Dawn's instance serves many devices and threads.
wgpu::Instance create_instance() {
  static const wgpu::Instance* const instance = new wgpu::Instance(make_instance());
  return *instance;
}

constexpr uint64_t kStartupTimeoutNs = 60ull * 1000 * 1000 * 1000;

wgpu::Adapter request_adapter(const wgpu::Instance& instance, const wgpu::RequestAdapterOptions& options) {
  wgpu::Adapter result;
  wgpu::Future future = instance.RequestAdapter(
      &options, wgpu::CallbackMode::WaitAnyOnly,
      [&result](wgpu::RequestAdapterStatus status, wgpu::Adapter adapter, wgpu::StringView) {
        if (status == wgpu::RequestAdapterStatus::Success) result = std::move(adapter);
      });
  if (instance.WaitAny(future, kStartupTimeoutNs) != wgpu::WaitStatus::Success) {
    throw GpuError("timed out waiting for a WebGPU adapter");
  }
  return result;
}

AdapterDescription describe(const wgpu::Adapter& adapter, uint32_t* subgroup_min = nullptr,
                            uint32_t* subgroup_max = nullptr) {
  wgpu::AdapterInfo info;
  adapter.GetInfo(&info);
  AdapterDescription d;
  d.name = to_string(info.device);
  d.vendor = to_string(info.vendor);
  d.architecture = to_string(info.architecture);
  d.driver = to_string(info.description);
  d.backend = backend_name(info.backendType);
  d.type = adapter_type_name(info.adapterType);
  d.vendor_id = info.vendorID;
  d.device_id = info.deviceID;
  if (subgroup_min) *subgroup_min = info.subgroupMinSize;
  if (subgroup_max) *subgroup_max = info.subgroupMaxSize;
  return d;
}

// WebGPU hands out one adapter per request; asking with each power preference, each backend and
// the fallback (CPU) flag and removing duplicates lists what the machine has.
std::vector<std::pair<wgpu::Adapter, AdapterDescription>> enumerate_adapters(const wgpu::Instance& instance) {
  std::vector<std::pair<wgpu::Adapter, AdapterDescription>> found;
  const wgpu::BackendType backends[] = {wgpu::BackendType::Undefined, wgpu::BackendType::Vulkan,
                                        wgpu::BackendType::OpenGL, wgpu::BackendType::OpenGLES};
  const wgpu::PowerPreference preferences[] = {wgpu::PowerPreference::HighPerformance,
                                               wgpu::PowerPreference::LowPower};
  wgpu::DawnTogglesDescriptor toggles = make_toggles(true);
  for (bool fallback : {false, true}) {
    for (auto backend : backends) {
      for (auto preference : preferences) {
        wgpu::RequestAdapterOptions options;
        options.nextInChain = &toggles;
        options.powerPreference = preference;
        options.backendType = backend;
        options.forceFallbackAdapter = fallback;
        wgpu::Adapter adapter = request_adapter(instance, options);
        if (!adapter) continue;
        AdapterDescription d = describe(adapter);
        if (d.backend == "Null") continue;
        bool seen = std::any_of(found.begin(), found.end(), [&](const auto& entry) {
          const auto& o = entry.second;
          return std::tie(o.name, o.backend, o.vendor_id, o.device_id, o.driver) ==
                 std::tie(d.name, d.backend, d.vendor_id, d.device_id, d.driver);
        });
        if (seen) continue;
        d.index = static_cast<int>(found.size());
        found.emplace_back(std::move(adapter), std::move(d));
      }
    }
  }
  return found;
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string describe_list(const std::vector<std::pair<wgpu::Adapter, AdapterDescription>>& adapters) {
  std::string text;
  for (const auto& [adapter, d] : adapters) {
    text += fmt::format("\n  [{}] {} ({}, {}, driver {})", d.index, d.name, d.backend, d.type, d.driver);
  }
  return text;
}

const char* kNoAdapterHint =
    "no WebGPU adapter found (Dawn offers only its Null backend). On a machine without a GPU install "
    "Mesa's lavapipe 24 or newer (Debian 12: mesa-vulkan-drivers from bookworm-backports; "
    "scripts/setup.sh does it); on a GPU machine check the Vulkan loader (libvulkan1) and the driver's "
    "ICD (VK_DRIVER_FILES=/path/to/icd.json)";

wgpu::Adapter choose_adapter(const wgpu::Instance& instance, std::string wanted) {
  if (wanted.empty()) {
    wanted = user_environment().adapter;
  }
  if (wanted.empty()) {
    wgpu::DawnTogglesDescriptor toggles = make_toggles(true);
    wgpu::RequestAdapterOptions options;
    options.nextInChain = &toggles;
    options.powerPreference = wgpu::PowerPreference::HighPerformance;
    wgpu::Adapter adapter = request_adapter(instance, options);
    if (!adapter || describe(adapter).backend == "Null") {
      options.forceFallbackAdapter = true;
      adapter = request_adapter(instance, options);
    }
    if (!adapter || describe(adapter).backend == "Null") throw GpuError(kNoAdapterHint);
    return adapter;
  }
  auto adapters = enumerate_adapters(instance);
  if (adapters.empty()) throw GpuError(kNoAdapterHint);
  bool is_index = std::all_of(wanted.begin(), wanted.end(), [](unsigned char c) { return std::isdigit(c); });
  if (is_index) {
    size_t index = std::stoul(wanted);
    if (index < adapters.size()) return adapters[index].first;
  } else {
    for (const auto& [adapter, d] : adapters) {
      if (lowercase(d.name).find(lowercase(wanted)) != std::string::npos) return adapter;
    }
  }
  throw GpuError(fmt::format("no WebGPU adapter matches '{}' (an index or part of a name); adapters:{}",
                             wanted, describe_list(adapters)));
}

}  // namespace

std::vector<AdapterDescription> Context::list_adapters() {
  std::vector<AdapterDescription> result;
  for (auto& entry : enumerate_adapters(create_instance())) result.push_back(std::move(entry.second));
  return result;
}

Context::Context(const ContextOptions& options) {
  wait_timeout_ns_ = static_cast<uint64_t>(options.wait_timeout_seconds * 1e9);
  instance_ = create_instance();
  adapter_ = choose_adapter(instance_, options.adapter);
  description_ = describe(adapter_, &subgroup_min_size_, &subgroup_max_size_);
  spin_wait_us_ =
      options.spin_wait_microseconds.value_or(description_.type == "CPU" ? 0 : kGpuSpinWaitMicroseconds);
  create_device(options);
  confirm_features();
  guards_ = std::make_unique<RunGuards>(*this);
}

Context::~Context() = default;

void Context::create_device(const ContextOptions& options) {
  bool robustness = options.robustness.value_or(description_.type == "CPU");
  if (const auto env = user_environment().robustness) robustness = *env;

  wgpu::SupportedFeatures supported;
  adapter_.GetFeatures(&supported);
  std::vector<Feature> offered = features_from_library(supported);
  std::vector<wgpu::FeatureName> requested;
  for (Feature feature : offered) {
    if (feature == Feature::TimestampQueryInsidePasses) continue;  // not used: per-pass timestamps suffice
    requested.push_back(library_feature_value(feature));
    features_.push_back(feature);
  }

  wgpu::Limits adapter_limits;
  adapter_.GetLimits(&adapter_limits);

  wgpu::DawnTogglesDescriptor toggles = make_toggles(robustness);
  std::filesystem::path cache_folder =
      options.pipeline_cache_folder.value_or(default_pipeline_cache_folder());
  wgpu::DawnCacheDeviceDescriptor cache;
  if (!cache_folder.empty()) {
    blob_cache_ = std::make_unique<DiskBlobCache>(cache_folder);
    // Dawn's keys name the adapter, driver and toggles; the isolation key keeps onda's entries apart
    // from those of other programs sharing a folder.
    cache.isolationKey = "onda";
    cache.loadDataFunction = [](const void* key, size_t key_size, void* value, size_t value_size,
                                void* user) {
      return static_cast<const DiskBlobCache*>(user)->load(key, key_size, value, value_size);
    };
    cache.storeDataFunction = [](const void* key, size_t key_size, const void* value, size_t value_size,
                                 void* user) {
      static_cast<const DiskBlobCache*>(user)->store(key, key_size, value, value_size);
    };
    cache.functionUserdata = blob_cache_.get();
    toggles.nextInChain = &cache;
  }
  wgpu::DeviceDescriptor descriptor;
  descriptor.nextInChain = &toggles;
  descriptor.label = "onda";
  descriptor.requiredFeatureCount = requested.size();
  descriptor.requiredFeatures = requested.data();
  descriptor.requiredLimits = &adapter_limits;
  // Captureless callbacks with the error state as userdata; errors_ outlives device_ (member order).
  descriptor.SetUncapturedErrorCallback(
      [](const wgpu::Device&, wgpu::ErrorType type, wgpu::StringView message, ErrorState* state) {
        std::lock_guard lock(state->mutex);
        if (state->first_error.empty()) {
          const char* kind = type == wgpu::ErrorType::OutOfMemory  ? "out of memory"
                             : type == wgpu::ErrorType::Validation ? "validation error"
                                                                   : "internal error";
          state->first_error = fmt::format("WebGPU {}: {}", kind, to_string(message));
        }
      },
      errors_.get());
  descriptor.SetDeviceLostCallback(
      wgpu::CallbackMode::AllowSpontaneous,
      [](const wgpu::Device&, wgpu::DeviceLostReason reason, wgpu::StringView message, ErrorState* state) {
        if (reason == wgpu::DeviceLostReason::Destroyed ||
            reason == wgpu::DeviceLostReason::CallbackCancelled) {
          return;
        }
        std::lock_guard lock(state->mutex);
        state->lost = true;
        state->first_error = fmt::format("WebGPU device lost: {}", to_string(message));
      },
      errors_.get());

  std::string failure;
  wgpu::Future future = adapter_.RequestDevice(
      &descriptor, wgpu::CallbackMode::WaitAnyOnly,
      [this, &failure](wgpu::RequestDeviceStatus status, wgpu::Device device, wgpu::StringView message) {
        if (status == wgpu::RequestDeviceStatus::Success) {
          device_ = std::move(device);
        } else {
          failure = to_string(message);
        }
      });
  if (instance_.WaitAny(future, kStartupTimeoutNs) != wgpu::WaitStatus::Success) {
    throw GpuError("timed out creating the WebGPU device on " + description_.name);
  }
  if (!device_)
    throw GpuError(fmt::format("could not create a WebGPU device on {}: {}", description_.name, failure));
  queue_ = device_.GetQueue();
  device_.GetLimits(&limits_);
  if (options.max_storage_binding_bytes != 0) {
    if (options.max_storage_binding_bytes < kMinStorageBindingCap) {
      throw GpuError(fmt::format("a storage binding cap of {} bytes is below the minimum of {} bytes",
                                 options.max_storage_binding_bytes, kMinStorageBindingCap));
    }
    // A multiple of 16 bytes, like every binding the kernels ask for.
    const uint64_t cap = options.max_storage_binding_bytes & ~uint64_t{15};
    limits_.maxStorageBufferBindingSize = std::min<uint64_t>(limits_.maxStorageBufferBindingSize, cap);
  }
}

// Each requested feature is used once before any kernel relies on it: with a mismatched header and
// library a request can silently enable a different feature, and the device would then reject the
// first real shader.
void Context::confirm_features() {
  auto compiles = [this](const char* source) {
    return capture_error(wgpu::ErrorFilter::Validation, [&] {
      wgpu::ShaderSourceWGSL wgsl;
      wgsl.code = source;
      wgpu::ShaderModuleDescriptor module_descriptor;
      module_descriptor.nextInChain = &wgsl;
      wgpu::ComputePipelineDescriptor pipeline_descriptor;
      pipeline_descriptor.compute.module = device_.CreateShaderModule(&module_descriptor);
      pipeline_descriptor.compute.entryPoint = "main";
      device_.CreateComputePipeline(&pipeline_descriptor);
    });
  };
  std::vector<Feature> confirmed;
  for (Feature feature : features_) {
    std::string error;
    switch (feature) {
      case Feature::ShaderF16:
        error = compiles(
            "enable f16;\n@group(0) @binding(0) var<storage, read_write> b: array<f16>;\n"
            "@compute @workgroup_size(1) fn main() { b[0] = b[0] * 2.0h; }");
        break;
      case Feature::Subgroups:
        error = compiles(
            "enable subgroups;\n@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n"
            "@compute @workgroup_size(32) fn main(@builtin(local_invocation_index) i: u32) {"
            " b[i] = subgroupAdd(b[i]); }");
        break;
      case Feature::SubgroupMatrix:
        error = compiles(
            "enable chromium_experimental_subgroup_matrix;\n"
            "@compute @workgroup_size(32) fn main() { }");
        break;
      case Feature::TimestampQuery:
        error = capture_error(wgpu::ErrorFilter::Validation, [&] {
          wgpu::QuerySetDescriptor query_descriptor;
          query_descriptor.type = wgpu::QueryType::Timestamp;
          query_descriptor.count = 2;
          device_.CreateQuerySet(&query_descriptor).Destroy();
        });
        break;
      case Feature::TimestampQueryInsidePasses:
        break;
      case Feature::ImplicitDeviceSynchronization:
        if (!device_.HasFeature(library_feature_value(feature))) error = "the device does not report it";
        break;
    }
    if (error.empty()) {
      confirmed.push_back(feature);
    } else {
      fmt::print(stderr, "onda: warning: adapter offers {} but it failed at start-up ({}); not using it\n",
                 feature_name(feature), error);
    }
  }
  features_ = std::move(confirmed);
  check_errors();
}

bool Context::has(Feature feature) const {
  return std::find(features_.begin(), features_.end(), feature) != features_.end();
}

std::string Context::capture_error(wgpu::ErrorFilter filter, const std::function<void()>& create) {
  device_.PushErrorScope(filter);
  create();
  std::string message;
  wgpu::Future future = device_.PopErrorScope(
      wgpu::CallbackMode::WaitAnyOnly,
      [&message](wgpu::PopErrorScopeStatus status, wgpu::ErrorType type, wgpu::StringView text) {
        if (status != wgpu::PopErrorScopeStatus::Success) {
          message = "error scope could not be read (device lost?)";
        } else if (type != wgpu::ErrorType::NoError) {
          message = to_string(text);
          if (message.empty()) message = "unspecified error";
        }
      });
  wait(future);
  return message;
}

void Context::wait(const wgpu::Future& future) {
  // Poll first (a zero timeout checks without blocking), then block for what remains.
  wgpu::WaitStatus status = wgpu::WaitStatus::TimedOut;
  if (spin_wait_us_ > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_wait_us_);
    do {
      status = instance_.WaitAny(future, 0);
    } while (status == wgpu::WaitStatus::TimedOut && std::chrono::steady_clock::now() < until);
  }
  if (status == wgpu::WaitStatus::TimedOut) status = instance_.WaitAny(future, wait_timeout_ns_);
  if (status == wgpu::WaitStatus::TimedOut) {
    check_errors();
    throw GpuError(fmt::format("GPU work did not finish within {:.0f} s (hang or device loss)",
                               static_cast<double>(wait_timeout_ns_) * 1e-9));
  }
  if (status != wgpu::WaitStatus::Success) {
    check_errors();
    throw GpuError("waiting for GPU work failed");
  }
  check_errors();
}

void Context::check_errors() {
  instance_.ProcessEvents();
  std::lock_guard lock(errors_->mutex);
  // Device loss is sticky: every later call fails too.
  if (errors_->lost) throw DeviceLostError(errors_->first_error);
  if (errors_->first_error.empty()) return;
  std::string message = std::move(errors_->first_error);
  errors_->first_error.clear();
  throw GpuError(message);
}

void Context::finish() {
  bool done = false;
  wgpu::Future future = queue_.OnSubmittedWorkDone(
      wgpu::CallbackMode::WaitAnyOnly, [&done](wgpu::QueueWorkDoneStatus, wgpu::StringView) { done = true; });
  wait(future);
  if (!done) throw GpuError("queue did not report completion");
}

}  // namespace onda::gpu
