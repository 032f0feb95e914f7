// The C API (include/onda/onda.h) over the C++ one: handles own shared C++ objects, every entry
// point catches every exception and turns it into a status plus a thread-local message.
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "onda/onda.h"
#include "onda/session.h"
#include "onda/stream.h"

struct onda_device {
  std::shared_ptr<onda::Device> device;
};

struct onda_session {
  std::shared_ptr<onda::Session> session;  // shared with the streams over it
};

struct onda_tensor {
  onda::HostTensor host;
  onda::DeviceTensor device;  // set for a device tensor (host then undefined)
};

struct onda_stream {
  std::unique_ptr<onda::Stream> stream;
  std::vector<std::pair<std::string, std::string>> pairs;  // output, input: stable strings for C
  std::vector<std::string> frame_outputs;
};

namespace {

thread_local std::string last_error;

onda_status fail(onda_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

// Runs `body`; exceptions become statuses (most specific type first).
template <typename Body>
onda_status guarded(Body&& body) {
  try {
    last_error.clear();
    return body();
  } catch (const onda::InputError& e) {
    return fail(ONDA_ERROR_INPUT, e.what());
  } catch (const onda::ModelError& e) {
    return fail(ONDA_ERROR_MODEL, e.what());
  } catch (const onda::NpyError& e) {
    return fail(ONDA_ERROR_MODEL, e.what());
  } catch (const onda::DeviceLostError& e) {
    return fail(ONDA_ERROR_DEVICE_LOST, e.what());
  } catch (const onda::OutOfMemoryError& e) {
    return fail(ONDA_ERROR_OUT_OF_MEMORY, e.what());
  } catch (const onda::DeviceLimitError& e) {
    return fail(ONDA_ERROR_DEVICE_LIMIT, e.what());
  } catch (const onda::GpuError& e) {
    return fail(ONDA_ERROR_GPU, e.what());
  } catch (const std::bad_alloc&) {
    return fail(ONDA_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(ONDA_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(ONDA_ERROR_INTERNAL, "unknown error");
  }
}

bool valid_dtype(onda_dtype dtype) {
  return dtype >= ONDA_DTYPE_FLOAT32 && dtype <= ONDA_DTYPE_BOOL;
}
onda::DType to_cpp(onda_dtype dtype) {
  return static_cast<onda::DType>(dtype);
}
onda_dtype to_c(onda::DType dtype) {
  return static_cast<onda_dtype>(dtype);
}
onda_run_stats to_c(const onda::RunStats& s) {
  return onda_run_stats{s.wall_ms, s.dispatches, s.host_upload_bytes, s.host_download_bytes,
                        s.peak_gpu_bytes};
}
static_assert(static_cast<int>(onda::DType::boolean) == ONDA_DTYPE_BOOL, "C and C++ dtype numbers agree");

onda_status describe(const std::vector<onda::TensorSpec>& specs, size_t index, const char** name,
                     onda_dtype* dtype, const int64_t** shape, size_t* rank) {
  if (index >= specs.size()) {
    return fail(ONDA_ERROR_INVALID_ARGUMENT,
                "index " + std::to_string(index) + " is past the last of " + std::to_string(specs.size()));
  }
  const onda::TensorSpec& spec = specs[index];
  if (name) *name = spec.name.c_str();
  if (dtype) *dtype = to_c(spec.dtype);
  if (shape) *shape = spec.shape.data();
  if (rank) *rank = spec.shape.size();
  return ONDA_OK;
}

onda_status make_host_tensor(onda_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                             size_t byte_size, bool view, onda_tensor** tensor) {
  if (!tensor) return fail(ONDA_ERROR_INVALID_ARGUMENT, "tensor out-pointer is NULL");
  *tensor = nullptr;
  if (!valid_dtype(dtype)) return fail(ONDA_ERROR_INVALID_ARGUMENT, "unknown dtype " + std::to_string(dtype));
  if (rank > 0 && !shape) return fail(ONDA_ERROR_INVALID_ARGUMENT, "shape is NULL with rank > 0");
  if (view && !data) return fail(ONDA_ERROR_INVALID_ARGUMENT, "a view of NULL data");
  return guarded([&] {
    onda::Shape dims(shape, shape + rank);
    const size_t expected =
        static_cast<size_t>(onda::shape_numel(dims)) * onda::host_element_size(to_cpp(dtype));
    if ((data || byte_size != 0) && byte_size != expected) {
      return fail(ONDA_ERROR_INVALID_ARGUMENT,
                  "byte_size " + std::to_string(byte_size) + " does not match the " +
                      std::string(onda::dtype_name(to_cpp(dtype))) + " shape " + onda::shape_to_string(dims) +
                      " (" + std::to_string(expected) + " bytes)");
    }
    auto result = std::make_unique<onda_tensor>();
    if (!data) {
      result->host = onda::HostTensor(to_cpp(dtype), dims);
    } else {
      result->host = view ? onda::HostTensor::view(to_cpp(dtype), dims, data, byte_size)
                          : onda::HostTensor::copy_of(to_cpp(dtype), dims, data, byte_size);
    }
    *tensor = result.release();
    return ONDA_OK;
  });
}

// Named C tensors as the C++ maps of host and device inputs.
onda_status split_inputs(size_t input_count, const char* const* input_names, const onda_tensor* const* inputs,
                         std::map<std::string, onda::HostTensor>& host_inputs,
                         std::map<std::string, onda::DeviceTensor>& device_inputs) {
  for (size_t i = 0; i < input_count; ++i) {
    if (!input_names[i] || !inputs[i]) {
      return fail(ONDA_ERROR_INVALID_ARGUMENT, "input " + std::to_string(i) + " has a NULL name or tensor");
    }
    const std::string name = input_names[i];
    if (host_inputs.count(name) || device_inputs.count(name)) {
      return fail(ONDA_ERROR_INPUT, "input '" + name + "' given twice");
    }
    if (inputs[i]->device.defined()) {
      device_inputs[name] = inputs[i]->device;
    } else {
      host_inputs[name] = inputs[i]->host;
    }
  }
  return ONDA_OK;
}

// A run's or a step's arguments checked (NULL arrays) and its inputs split into host and device ones.
onda_status run_arguments(size_t input_count, const char* const* input_names,
                          const onda_tensor* const* inputs, onda_tensor** outputs,
                          std::map<std::string, onda::HostTensor>& host_inputs,
                          std::map<std::string, onda::DeviceTensor>& device_inputs) {
  if (input_count > 0 && (!input_names || !inputs))
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "inputs are NULL");
  if (!outputs) return fail(ONDA_ERROR_INVALID_ARGUMENT, "outputs array is NULL");
  return split_inputs(input_count, input_names, inputs, host_inputs, device_inputs);
}

}  // namespace

extern "C" {

const char* onda_last_error(void) {
  return last_error.c_str();
}

void onda_version(int* major, int* minor, int* patch) {
  const onda::Version v = onda::version();
  if (major) *major = v.major;
  if (minor) *minor = v.minor;
  if (patch) *patch = v.patch;
}

onda_status onda_device_open(const char* adapter, onda_device** device) {
  if (!device) return fail(ONDA_ERROR_INVALID_ARGUMENT, "device out-pointer is NULL");
  *device = nullptr;
  return guarded([&] {
    auto result = std::make_unique<onda_device>();
    onda::DeviceOptions options;
    options.adapter = adapter ? adapter : "";
    result->device = onda::Device::open(options);
    *device = result.release();
    return ONDA_OK;
  });
}

void onda_device_release(onda_device* device) {
  delete device;
}

const char* onda_device_adapter_name(const onda_device* device) {
  return device ? device->device->adapter().name.c_str() : "";
}

onda_status onda_session_open(const char* path, onda_device* device, onda_session** session) {
  if (!session) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session out-pointer is NULL");
  *session = nullptr;
  if (!path) return fail(ONDA_ERROR_INVALID_ARGUMENT, "model path is NULL");
  return guarded([&] {
    auto result = std::make_unique<onda_session>();
    result->session = onda::Session::open(path, {}, device ? device->device : nullptr);
    *session = result.release();
    return ONDA_OK;
  });
}

onda_status onda_session_open_bytes(const void* model, size_t size, onda_device* device,
                                    onda_external_data_fn resolver, void* user_data, onda_session** session) {
  if (!session) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session out-pointer is NULL");
  *session = nullptr;
  if (!model && size > 0) return fail(ONDA_ERROR_INVALID_ARGUMENT, "model bytes are NULL");
  return guarded([&] {
    onda::ExternalDataResolver cpp_resolver;
    if (resolver) {
      cpp_resolver = [resolver, user_data](const std::string& location) {
        const void* data = nullptr;
        size_t bytes = 0;
        if (resolver(user_data, location.c_str(), &data, &bytes) != 0 || (!data && bytes > 0)) {
          throw onda::ModelError("the resolver has no '" + location + "'");
        }
        const auto* begin = static_cast<const std::byte*>(data);
        return std::vector<std::byte>(begin, begin + bytes);
      };
    }
    auto result = std::make_unique<onda_session>();
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(model), size);
    result->session = onda::Session::open_bytes(bytes, {}, device ? device->device : nullptr, cpp_resolver);
    *session = result.release();
    return ONDA_OK;
  });
}

void onda_session_release(onda_session* session) {
  delete session;
}

size_t onda_session_input_count(const onda_session* session) {
  return session ? session->session->inputs().size() : 0;
}
size_t onda_session_output_count(const onda_session* session) {
  return session ? session->session->outputs().size() : 0;
}

onda_status onda_session_input(const onda_session* session, size_t index, const char** name,
                               onda_dtype* dtype, const int64_t** shape, size_t* rank) {
  if (!session) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session is NULL");
  return describe(session->session->inputs(), index, name, dtype, shape, rank);
}

onda_status onda_session_output(const onda_session* session, size_t index, const char** name,
                                onda_dtype* dtype, const int64_t** shape, size_t* rank) {
  if (!session) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session is NULL");
  return describe(session->session->outputs(), index, name, dtype, shape, rank);
}

onda_status onda_session_run(onda_session* session, size_t input_count, const char* const* input_names,
                             const onda_tensor* const* inputs, int outputs_on_device, onda_tensor** outputs) {
  if (!session) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session is NULL");
  std::map<std::string, onda::HostTensor> host_inputs;
  std::map<std::string, onda::DeviceTensor> device_inputs;
  if (onda_status status =
          run_arguments(input_count, input_names, inputs, outputs, host_inputs, device_inputs))
    return status;
  return guarded([&] {
    onda::Session& s = *session->session;
    std::vector<std::unique_ptr<onda_tensor>> results;
    if (outputs_on_device) {
      auto out = s.run_device(host_inputs, device_inputs);
      for (const auto& spec : s.outputs())
        results.push_back(std::make_unique<onda_tensor>(onda_tensor{{}, out.at(spec.name)}));
    } else {
      auto out = s.run(host_inputs, device_inputs);
      for (const auto& spec : s.outputs())
        results.push_back(std::make_unique<onda_tensor>(onda_tensor{out.at(spec.name), {}}));
    }
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = results[i].release();
    return ONDA_OK;
  });
}

onda_status onda_session_last_run(const onda_session* session, onda_run_stats* stats) {
  if (!session || !stats) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session or stats is NULL");
  *stats = to_c(session->session->last_run());
  return ONDA_OK;
}

onda_status onda_stream_open(onda_session* session, size_t pair_count, const char* const* state_outputs,
                             const char* const* state_inputs, size_t initial_count,
                             const char* const* initial_names, const onda_tensor* const* initial_values,
                             onda_stream** stream) {
  if (!stream) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream out-pointer is NULL");
  *stream = nullptr;
  if (!session) return fail(ONDA_ERROR_INVALID_ARGUMENT, "session is NULL");
  if (pair_count > 0 && (!state_outputs || !state_inputs))
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "state names are NULL");
  if (initial_count > 0 && (!initial_names || !initial_values))
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "initial values are NULL");
  onda::StreamOptions options;
  for (size_t i = 0; i < pair_count; ++i) {
    if (!state_outputs[i] || !state_inputs[i])
      return fail(ONDA_ERROR_INVALID_ARGUMENT, "state pair " + std::to_string(i) + " has a NULL name");
    options.state[state_outputs[i]] = state_inputs[i];
  }
  for (size_t i = 0; i < initial_count; ++i) {
    if (!initial_names[i] || !initial_values[i])
      return fail(ONDA_ERROR_INVALID_ARGUMENT,
                  "initial value " + std::to_string(i) + " has a NULL name or tensor");
    if (initial_values[i]->device.defined())
      return fail(ONDA_ERROR_INVALID_ARGUMENT,
                  "initial value '" + std::string(initial_names[i]) + "' must be a host tensor");
    options.initial[initial_names[i]] = initial_values[i]->host;
  }
  return guarded([&] {
    auto result = std::make_unique<onda_stream>();
    result->stream = std::make_unique<onda::Stream>(session->session, options);
    for (const auto& pair : result->stream->state_pairs()) result->pairs.push_back(pair);
    result->frame_outputs = result->stream->frame_outputs();
    *stream = result.release();
    return ONDA_OK;
  });
}

void onda_stream_release(onda_stream* stream) {
  delete stream;
}

size_t onda_stream_state_count(const onda_stream* stream) {
  return stream ? stream->pairs.size() : 0;
}

onda_status onda_stream_state(const onda_stream* stream, size_t index, const char** output,
                              const char** input) {
  if (!stream) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream is NULL");
  if (index >= stream->pairs.size())
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "index " + std::to_string(index) + " is past the last of " +
                                                 std::to_string(stream->pairs.size()));
  if (output) *output = stream->pairs[index].first.c_str();
  if (input) *input = stream->pairs[index].second.c_str();
  return ONDA_OK;
}

size_t onda_stream_frame_output_count(const onda_stream* stream) {
  return stream ? stream->frame_outputs.size() : 0;
}

onda_status onda_stream_frame_output(const onda_stream* stream, size_t index, const char** name) {
  if (!stream) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream is NULL");
  if (index >= stream->frame_outputs.size())
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "index " + std::to_string(index) + " is past the last of " +
                                                 std::to_string(stream->frame_outputs.size()));
  if (name) *name = stream->frame_outputs[index].c_str();
  return ONDA_OK;
}

onda_status onda_stream_step(onda_stream* stream, size_t input_count, const char* const* input_names,
                             const onda_tensor* const* inputs, onda_tensor** outputs) {
  if (!stream) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream is NULL");
  std::map<std::string, onda::HostTensor> host_inputs;
  std::map<std::string, onda::DeviceTensor> device_inputs;
  if (onda_status status =
          run_arguments(input_count, input_names, inputs, outputs, host_inputs, device_inputs))
    return status;
  return guarded([&] {
    auto out = stream->stream->step(host_inputs, device_inputs, {}).host;
    std::vector<std::unique_ptr<onda_tensor>> results;
    for (const auto& name : stream->frame_outputs)
      results.push_back(std::make_unique<onda_tensor>(onda_tensor{out.at(name), {}}));
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = results[i].release();
    return ONDA_OK;
  });
}

onda_status onda_stream_reset(onda_stream* stream) {
  if (!stream) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream is NULL");
  return guarded([&] {
    stream->stream->reset();
    return ONDA_OK;
  });
}

onda_status onda_stream_state_tensor(const onda_stream* stream, const char* input,
                                     onda_tensor** device_tensor) {
  if (!device_tensor) return fail(ONDA_ERROR_INVALID_ARGUMENT, "tensor out-pointer is NULL");
  *device_tensor = nullptr;
  if (!stream || !input) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream or input name is NULL");
  const auto& states = stream->stream->states();
  auto found = states.find(input);
  if (found == states.end())
    return fail(ONDA_ERROR_INPUT, "'" + std::string(input) + "' is not a state input of the stream");
  return guarded([&] {
    *device_tensor = new onda_tensor{{}, found->second};
    return ONDA_OK;
  });
}

onda_status onda_stream_last_run(const onda_stream* stream, onda_run_stats* stats) {
  if (!stream || !stats) return fail(ONDA_ERROR_INVALID_ARGUMENT, "stream or stats is NULL");
  *stats = to_c(stream->stream->last_run());
  return ONDA_OK;
}

onda_status onda_tensor_create(onda_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                               size_t byte_size, onda_tensor** tensor) {
  return make_host_tensor(dtype, shape, rank, data, byte_size, false, tensor);
}

onda_status onda_tensor_view(onda_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                             size_t byte_size, onda_tensor** tensor) {
  return make_host_tensor(dtype, shape, rank, data, byte_size, true, tensor);
}

onda_status onda_tensor_to_device(const onda_tensor* host, onda_device* device, onda_tensor** device_tensor) {
  if (!device_tensor) return fail(ONDA_ERROR_INVALID_ARGUMENT, "tensor out-pointer is NULL");
  *device_tensor = nullptr;
  if (!host || !device) return fail(ONDA_ERROR_INVALID_ARGUMENT, "tensor or device is NULL");
  if (host->device.defined())
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "the tensor is already a device tensor");
  return guarded([&] {
    auto result = std::make_unique<onda_tensor>();
    result->device = onda::DeviceTensor::upload(device->device, host->host);
    *device_tensor = result.release();
    return ONDA_OK;
  });
}

onda_status onda_tensor_to_host(const onda_tensor* device_tensor, onda_tensor** host) {
  if (!host) return fail(ONDA_ERROR_INVALID_ARGUMENT, "tensor out-pointer is NULL");
  *host = nullptr;
  if (!device_tensor || !device_tensor->device.defined()) {
    return fail(ONDA_ERROR_INVALID_ARGUMENT, "not a device tensor");
  }
  return guarded([&] {
    auto result = std::make_unique<onda_tensor>();
    result->host = device_tensor->device.download();
    *host = result.release();
    return ONDA_OK;
  });
}

void onda_tensor_release(onda_tensor* tensor) {
  delete tensor;
}

int onda_tensor_on_device(const onda_tensor* tensor) {
  return tensor && tensor->device.defined() ? 1 : 0;
}

onda_dtype onda_tensor_dtype(const onda_tensor* tensor) {
  if (!tensor) return ONDA_DTYPE_FLOAT32;
  return to_c(tensor->device.defined() ? tensor->device.dtype() : tensor->host.dtype());
}

size_t onda_tensor_rank(const onda_tensor* tensor) {
  if (!tensor) return 0;
  return tensor->device.defined() ? tensor->device.shape().size() : tensor->host.shape().size();
}

const int64_t* onda_tensor_shape(const onda_tensor* tensor) {
  if (!tensor) return nullptr;
  return tensor->device.defined() ? tensor->device.shape().data() : tensor->host.shape().data();
}

size_t onda_tensor_byte_size(const onda_tensor* tensor) {
  if (!tensor) return 0;
  if (tensor->device.defined()) {
    return static_cast<size_t>(tensor->device.numel()) * onda::host_element_size(tensor->device.dtype());
  }
  return tensor->host.byte_size();
}

const void* onda_tensor_data(const onda_tensor* tensor) {
  return tensor && !tensor->device.defined() ? tensor->host.data() : nullptr;
}

}  // extern "C"
