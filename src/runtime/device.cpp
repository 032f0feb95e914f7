// Device and DeviceTensor (include/onda/device.h, device_tensor.h): a GPU context shared by
// sessions, and tensors kept in its memory.
#include <fmt/format.h>

#include "gpu/gpu_error.h"
#include "graph/model_error.h"
#include "runtime/device_impl.h"

namespace onda {
namespace {

AdapterInfo public_info(const gpu::AdapterDescription& d) {
  return AdapterInfo{d.index,   d.name, d.vendor,    d.architecture, d.driver,
                     d.backend, d.type, d.vendor_id, d.device_id};
}

DeviceLimits public_limits(const gpu::Context& context) {
  const wgpu::Limits& l = context.limits();
  DeviceLimits d;
  d.max_buffer_size = l.maxBufferSize;
  d.max_storage_buffer_binding_size = l.maxStorageBufferBindingSize;
  d.max_storage_buffers_per_shader_stage = l.maxStorageBuffersPerShaderStage;
  d.max_uniform_buffer_binding_size = l.maxUniformBufferBindingSize;
  d.min_storage_buffer_offset_alignment = l.minStorageBufferOffsetAlignment;
  d.min_uniform_buffer_offset_alignment = l.minUniformBufferOffsetAlignment;
  d.max_compute_workgroup_storage_size = l.maxComputeWorkgroupStorageSize;
  d.max_compute_invocations_per_workgroup = l.maxComputeInvocationsPerWorkgroup;
  d.max_compute_workgroup_size[0] = l.maxComputeWorkgroupSizeX;
  d.max_compute_workgroup_size[1] = l.maxComputeWorkgroupSizeY;
  d.max_compute_workgroup_size[2] = l.maxComputeWorkgroupSizeZ;
  d.max_compute_workgroups_per_dimension = l.maxComputeWorkgroupsPerDimension;
  d.subgroup_min_size = context.subgroup_min_size();
  d.subgroup_max_size = context.subgroup_max_size();
  return d;
}

}  // namespace

Device::Device(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Device::~Device() = default;

std::shared_ptr<Device> Device::open(const DeviceOptions& options) {
  gpu::ContextOptions context_options;
  context_options.adapter = options.adapter;
  context_options.max_storage_binding_bytes = options.max_storage_binding_bytes;
  context_options.pipeline_cache_folder = options.pipeline_cache_folder;
  context_options.spin_wait_microseconds = options.spin_wait_microseconds;
  auto impl = std::make_unique<Impl>(context_options);
  impl->adapter = public_info(impl->context.adapter_description());
  impl->limits = public_limits(impl->context);
  return std::shared_ptr<Device>(new Device(std::move(impl)));
}

std::vector<AdapterInfo> Device::list_adapters() {
  std::vector<AdapterInfo> result;
  for (const auto& d : gpu::Context::list_adapters()) result.push_back(public_info(d));
  return result;
}

const AdapterInfo& Device::adapter() const {
  return impl_->adapter;
}
const DeviceLimits& Device::limits() const {
  return impl_->limits;
}

std::vector<std::string> Device::features() const {
  std::vector<std::string> names;
  for (gpu::Feature f : impl_->context.features()) names.emplace_back(gpu::feature_name(f));
  return names;
}

DeviceTensor make_device_tensor(std::shared_ptr<Device> device, Tensor tensor) {
  return DeviceTensor(std::make_shared<const DeviceTensor::Impl>(std::move(device), std::move(tensor)));
}

DeviceTensor DeviceTensor::upload(const std::shared_ptr<Device>& device, const HostTensor& host) {
  if (!device) throw Error("DeviceTensor::upload without a device");
  if (!host.defined()) throw ModelError("DeviceTensor::upload of an undefined tensor");
  Device::Impl& d = device->impl();
  DeviceLock lock(d.mutex);
  return make_device_tensor(device,
                            Tensor::upload(d.context, d.tensors, host.dtype(), host.shape(), host.data()));
}

HostTensor DeviceTensor::download() const {
  if (!impl_) throw Error("download of an undefined DeviceTensor");
  Device::Impl& d = impl_->device->impl();
  DeviceLock lock(d.mutex);
  const std::vector<uint8_t> bytes = impl_->tensor.download_bytes(d.context);
  return HostTensor::copy_of(dtype(), shape(), bytes.data(), bytes.size());
}

DeviceTensor DeviceTensor::reshaped(Shape shape) const {
  if (!impl_) throw Error("reshape of an undefined DeviceTensor");
  if (shape_numel(shape) != numel()) {
    throw ModelError("cannot reshape a DeviceTensor of shape " + shape_to_string(this->shape()) + " to " +
                     shape_to_string(shape));
  }
  Device::Impl& d = impl_->device->impl();
  DeviceLock lock(d.mutex);
  return make_device_tensor(impl_->device, impl_->tensor.reshape(std::move(shape)));
}

const DeviceTensor::Impl& DeviceTensor::checked_impl() const {
  if (!impl_) throw Error("use of an undefined DeviceTensor");
  return *impl_;
}

DType DeviceTensor::dtype() const {
  return checked_impl().tensor.dtype();
}
const Shape& DeviceTensor::shape() const {
  return checked_impl().tensor.shape();
}
int64_t DeviceTensor::numel() const {
  return checked_impl().tensor.numel();
}
const std::shared_ptr<Device>& DeviceTensor::device() const {
  return checked_impl().device;
}

}  // namespace onda
