// The Python extension `onda._onda`: a thin pybind11 layer over onda's C++ API. The Python package
// (python/onda/__init__.py) builds onnxruntime's calling conventions on top of it.
//
// Every C++ name this file uses is in the section "C++ API used" just below, so that switching to
// a changed public API (include/onda/) is a change in one place.
//
// numpy in and out: a C-contiguous input array of a supported dtype is handed to the session
// without a copy (HostTensor::borrow, the array kept alive until the session lets go of it); an
// output HostTensor becomes a numpy array over the same bytes (a capsule keeps the tensor alive).
// The GIL is released while a model opens and while it runs.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// ---- C++ API used ------------------------------------------------------------------------------
#include "onda/audio.h"          // audio::Separator, SeparateOptions, AudioBuffer, read_audio, errors
#include "onda/device.h"         // Device (open, list_adapters: what `onda info --list` uses)
#include "onda/device_tensor.h"  // DeviceTensor: upload, download, run_device's outputs
#include "onda/error.h"          // ModelError, NpyError, GpuError
#include "onda/session.h"        // Session, SessionOptions, TensorSpec, RunStats, HostTensor, DType
#include "onda/tensor_proto.h"   // read_tensor_proto_file (`python3 -m onda run --test-data`)
#include "onda/tuning.h"         // describe_tuning (`python3 -m onda info`)

namespace py = pybind11;
using onda::DeviceTensor;
using onda::DType;
using onda::HostTensor;
using onda::Session;
using onda::SessionOptions;
using onda::TensorSpec;
using ModelError = onda::ModelError;
using GpuError = onda::GpuError;
using AudioError = onda::audio::AudioError;
using DescriptionError = onda::audio::DescriptionError;
// -------------------------------------------------------------------------------------------------

namespace {

// numpy's dtype for an onda dtype, and back (nullopt: not one onda holds).
py::dtype numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return py::dtype("float32");
    case DType::f16:
      return py::dtype("float16");
    case DType::i32:
      return py::dtype("int32");
    case DType::i64:
      return py::dtype("int64");
    case DType::u8:
      return py::dtype("uint8");
    case DType::boolean:
      return py::dtype("bool");
  }
  throw std::logic_error("unknown dtype");
}

std::optional<DType> onda_dtype(const py::dtype& dtype) {
  // Byte order aside (a byte-swapped array is converted below).
  const py::dtype native = dtype.attr("newbyteorder")("=");
  for (DType d : {DType::f32, DType::f16, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    if (native.equal(numpy_dtype(d))) return d;
  }
  return std::nullopt;
}

// Inputs the session keeps to compare on a later run (small integer inputs, tiny float ones: the
// values shape arithmetic reads while recording) must not change behind its back, so arrays up to
// this size are copied; a caller may reuse and overwrite its arrays between runs. Larger ones are
// borrowed: the session only uploads them. 512 KiB covers 65536 int64 values, the most it keeps.
constexpr size_t kCopyBelowBytes = 512 * 1024;

HostTensor to_host_tensor(const std::string& name, py::array array) {
  const auto dtype = onda_dtype(array.dtype());
  if (!dtype) {
    throw ModelError("input '" + name + "' has dtype " + py::str(array.dtype()).cast<std::string>() +
                     ", which onda does not hold (float32, float16, int32, int64, uint8, bool)");
  }
  // Other layouts (strided, Fortran order, byte-swapped) are converted once here.
  if (!(array.flags() & py::array::c_style) || !array.dtype().attr("isnative").cast<bool>()) {
    array = py::array(py::module_::import("numpy").attr("ascontiguousarray")(array, numpy_dtype(*dtype)));
  }
  onda::Shape shape(array.shape(), array.shape() + array.ndim());
  const size_t bytes = static_cast<size_t>(array.nbytes());
  const auto* data = static_cast<const std::byte*>(array.data());
  if (bytes <= kCopyBelowBytes) return HostTensor::copy_of(*dtype, std::move(shape), data, bytes);
  // The session may drop its reference on any thread: take the GIL to release the array.
  auto* keep = new py::object(array);
  std::shared_ptr<const void> owner(keep, [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::object*>(p);
  });
  return HostTensor::borrow(*dtype, std::move(shape), std::move(owner), data, bytes);
}

// A numpy array over the tensor's bytes. Outputs the session holds on the host (constants, values
// computed on the host: at most 65536 elements, so at most 512 KiB) are its own bytes, shared with
// later runs: those are copied, so that writing into the array changes nothing in the session.
// Larger outputs are downloaded afresh by each run and handed over without a copy.
py::array to_numpy(HostTensor tensor) {
  auto* held = new HostTensor(tensor.byte_size() <= kCopyBelowBytes ? tensor.clone() : std::move(tensor));
  py::capsule owner(held, [](void* p) { delete static_cast<HostTensor*>(p); });
  std::vector<py::ssize_t> shape(held->shape().begin(), held->shape().end());
  return py::array(numpy_dtype(held->dtype()), shape, held->mutable_data(), owner);
}

py::tuple spec_tuple(const TensorSpec& spec) {
  return py::make_tuple(spec.name, std::string(onda::dtype_name(spec.dtype)), spec.shape, spec.dim_names);
}

py::dict adapter_dict(const onda::AdapterInfo& d) {
  py::dict a;
  a["index"] = d.index;
  a["name"] = d.name;
  a["vendor"] = d.vendor;
  a["backend"] = d.backend;
  a["type"] = d.type;
  a["driver"] = d.driver;
  return a;
}

// onda::Device: one adapter's GPU context, shared by the sessions opened on it (so that their
// DeviceTensors can pass from one to another).
struct PyDevice {
  std::shared_ptr<onda::Device> device;
};

PyDevice open_device(const std::string& adapter) {
  onda::DeviceOptions options;
  options.adapter = adapter;
  py::gil_scoped_release release;
  return PyDevice{onda::Device::open(options)};
}

// onda::DeviceTensor: a value in GPU memory of one Device.
struct PyDeviceTensor {
  DeviceTensor tensor;

  py::tuple shape() const {
    py::tuple t(tensor.shape().size());
    for (size_t i = 0; i < tensor.shape().size(); ++i) t[i] = tensor.shape()[i];
    return t;
  }
  std::string dtype() const { return std::string(onda::dtype_name(tensor.dtype())); }
  py::array numpy() const {
    HostTensor host;
    {
      py::gil_scoped_release release;
      host = tensor.download();
    }
    return to_numpy(std::move(host));
  }
  PyDevice device() const { return PyDevice{tensor.device()}; }
};

PyDeviceTensor upload(const PyDevice& device, py::array array) {
  HostTensor host = to_host_tensor("DeviceTensor", std::move(array));
  py::gil_scoped_release release;
  PyDeviceTensor result{DeviceTensor::upload(device.device, host)};
  host = HostTensor();  // a borrowed array released before the GIL is taken back
  return result;
}

// The options of a session (onda::SessionOptions), as the Python side passes them.
struct PySessionOptions {
  std::string adapter;
  bool profile = false;
  uint32_t first_submit_dispatches = SessionOptions{}.first_submit_dispatches;
  std::vector<std::string> tuning;
  uint64_t max_storage_binding_bytes = 0;
  uint64_t memory_limit = 0;
};

// onda::Session behind the Python InferenceSession.
class PySession {
 public:
  // `model`: a path (str, os.PathLike) or the model's bytes; `device`: None = the session's own.
  PySession(const py::object& model, const PySessionOptions& o, const std::optional<PyDevice>& device) {
    SessionOptions options;
    options.adapter = o.adapter;
    options.profile = o.profile;
    options.first_submit_dispatches = o.first_submit_dispatches;
    options.tuning = o.tuning;
    options.max_storage_binding_bytes = o.max_storage_binding_bytes;
    options.memory_limit = o.memory_limit;
    std::shared_ptr<onda::Device> shared = device ? device->device : nullptr;
    if (py::isinstance<py::bytes>(model)) {
      const auto bytes = model.cast<py::bytes>();  // immutable, kept alive by this reference
      const std::string_view view = bytes;
      py::gil_scoped_release release;
      session_ = Session::open_bytes(std::as_bytes(std::span(view.data(), view.size())), options, shared);
    } else {
      const auto path = model.cast<std::filesystem::path>();
      py::gil_scoped_release release;
      session_ = Session::open(path, options, shared);
    }
  }

  py::list inputs() const {
    py::list list;
    for (const auto& spec : session_->inputs()) list.append(spec_tuple(spec));
    return list;
  }
  py::list outputs() const {
    py::list list;
    for (const auto& spec : session_->outputs()) list.append(spec_tuple(spec));
    return list;
  }
  std::string adapter_name() const { return session_->adapter_name(); }

  // Session::plan_memory: the static memory plan of these input shapes, nothing run.
  py::dict plan_memory(const std::map<std::string, std::vector<int64_t>>& shapes) {
    onda::MemoryPlanReport plan;
    {
      py::gil_scoped_release release;
      plan = session_->plan_memory(shapes);
    }
    py::dict d;
    d["activation_bytes"] = plan.activation_bytes;
    d["live_peak_bytes"] = plan.live_peak_bytes;
    d["weight_bytes"] = plan.weight_bytes;
    d["arenas"] = plan.arenas;
    d["values"] = plan.values;
    d["peak_node"] = plan.peak_node;
    return d;
  }
  PyDevice device() const { return PyDevice{session_->device()}; }

  // Inputs by name in, every output by name out (the Python side orders and selects them).
  py::dict run(const py::dict& feed) { return run_with(feed, py::dict(), false); }

  // Host inputs (arrays) and device inputs (DeviceTensors) by name; every output by name, as numpy
  // arrays, or with `on_device` as DeviceTensors left on the GPU (nothing read back).
  py::dict run_with(const py::dict& host_feed, const py::dict& device_feed, bool on_device) {
    std::map<std::string, HostTensor> host_inputs;
    for (const auto& [key, value] : host_feed) {
      const auto name = py::str(key).cast<std::string>();
      py::array array = py::array::ensure(value);
      if (!array) throw ModelError("input '" + name + "' is not an array");
      host_inputs.emplace(name, to_host_tensor(name, std::move(array)));
    }
    std::map<std::string, DeviceTensor> device_inputs;
    for (const auto& [key, value] : device_feed)
      device_inputs.emplace(py::str(key).cast<std::string>(), value.cast<const PyDeviceTensor&>().tensor);
    py::dict result;
    if (on_device) {
      std::map<std::string, DeviceTensor> outputs;
      {
        py::gil_scoped_release release;
        outputs = session_->run_device(host_inputs, device_inputs);
        host_inputs.clear();  // borrowed arrays released here, before the GIL is taken back
      }
      for (auto& [name, tensor] : outputs) result[py::str(name)] = PyDeviceTensor{std::move(tensor)};
      return result;
    }
    std::map<std::string, HostTensor> outputs;
    {
      py::gil_scoped_release release;
      outputs =
          device_inputs.empty() ? session_->run(host_inputs) : session_->run(host_inputs, device_inputs);
      host_inputs.clear();
    }
    for (auto& [name, tensor] : outputs) result[py::str(name)] = to_numpy(std::move(tensor));
    return result;
  }

  py::dict last_run() const {
    const onda::RunStats& s = session_->last_run();
    py::dict d;
    d["wall_ms"] = s.wall_ms;
    d["record_ms"] = s.record_ms;
    d["gpu_wait_ms"] = s.gpu_wait_ms;
    d["dispatches"] = s.dispatches;
    d["submits"] = s.submits;
    d["peak_gpu_bytes"] = s.peak_gpu_bytes;
    d["peak_activation_bytes"] = s.peak_activation_bytes;
    d["weight_bytes"] = s.weight_bytes;
    d["buffers_allocated"] = s.buffers_allocated;
    d["host_upload_bytes"] = s.host_upload_bytes;
    d["host_download_bytes"] = s.host_download_bytes;
    d["planned_activation_bytes"] = s.planned_activation_bytes;
    d["live_activation_bytes"] = s.live_activation_bytes;
    d["profile_span_ms"] = s.profile_span_ms;
    d["profile_floor_ms"] = s.profile_floor_ms;
    d["peak_flops_per_second"] = s.peak_flops_per_second;
    d["peak_bytes_per_second"] = s.peak_bytes_per_second;
    d["dependent_dispatch_ms"] = s.dependent_dispatch_ms;
    py::list profile;
    for (const auto& line : s.profile) {
      py::dict entry;
      entry["op_type"] = line.op_type;
      entry["node"] = line.node;
      entry["gpu_ms"] = line.gpu_ms;
      entry["dispatches"] = line.dispatches;
      entry["input_shapes"] = line.input_shapes;
      entry["flops"] = line.flops;
      entry["bytes"] = line.bytes;
      entry["sequential_steps"] = line.sequential_steps;
      entry["latency_floor_ms"] = line.latency_floor_ms;
      entry["floor_ms"] = line.floor_ms;
      entry["cost_modeled"] = line.cost_modeled;
      profile.append(entry);
    }
    d["profile"] = profile;
    d["record_ms_by_op"] = s.record_ms_by_op;
    // What the run created for later runs (a first run's cost): pipelines, bind groups, cache entries.
    d["pipelines_created"] = s.pipelines_created;
    d["wgsl_render_ms"] = s.wgsl_render_ms;
    d["shader_module_ms"] = s.shader_module_ms;
    d["pipeline_create_ms"] = s.pipeline_create_ms;
    d["bind_groups_created"] = s.bind_groups_created;
    d["bind_group_create_ms"] = s.bind_group_create_ms;
    d["held_buffers_allocated"] = s.held_buffers_allocated;
    d["buffer_create_ms"] = s.buffer_create_ms;
    d["pipeline_cache_loads"] = s.pipeline_cache_loads;
    d["pipeline_cache_stores"] = s.pipeline_cache_stores;
    d["slow_node_record_ms"] = s.slow_node_record_ms;
    return d;
  }
  void set_profiling(bool on) { session_->set_profiling(on); }

 private:
  std::unique_ptr<Session> session_;
};

// Planar float32 [channels, frames] <-> AudioBuffer.
onda::audio::AudioBuffer to_audio(py::array_t<float, py::array::c_style | py::array::forcecast> samples,
                                  int sample_rate) {
  if (samples.ndim() != 1 && samples.ndim() != 2)
    throw AudioError("audio arrays are [channels, frames] or [frames], got " +
                     std::to_string(samples.ndim()) + " dimensions");
  const int channels = samples.ndim() == 2 ? static_cast<int>(samples.shape(0)) : 1;
  const int64_t frames = samples.ndim() == 2 ? samples.shape(1) : samples.shape(0);
  if (sample_rate <= 0) throw AudioError("an audio array needs its sample_rate");
  onda::audio::AudioBuffer buffer(sample_rate, channels, frames);
  std::memcpy(buffer.samples.data(), samples.data(), buffer.samples.size() * sizeof(float));
  return buffer;
}

py::array from_audio(onda::audio::AudioBuffer&& buffer) {
  auto* held = new std::vector<float>(std::move(buffer.samples));
  py::capsule owner(held, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>(
      {static_cast<py::ssize_t>(buffer.channels), static_cast<py::ssize_t>(buffer.frames)}, held->data(),
      owner);
}

struct AudioOptions {
  std::string model, description, adapter, two_stems;
  double segment = 0;
  std::optional<double> overlap;
  int batch = 1, shifts = 0;
  uint64_t seed = 0;
  std::string container = "wav", encoding = "pcm16";
  bool stream = false;  // a streaming model, frame by frame (onda enhance --stream)
};

// The same option mapping as tools/separate_command.cpp (separate_options); the Python side
// checks the flag combinations with the CLI's messages first.
onda::audio::SeparateOptions separate_options(const AudioOptions& a) {
  onda::audio::SeparateOptions o;
  o.model = a.model;
  if (!a.description.empty()) o.description = a.description;
  o.session.adapter = a.adapter;
  o.segment_seconds = a.segment;
  o.overlap = a.overlap;
  o.segments.batch = a.batch;
  o.segments.shifts = a.shifts;
  o.segments.seed = a.seed;
  o.two_stems = a.two_stems;
  using onda::audio::Container;
  using onda::audio::SampleEncoding;
  o.format.container = a.container == "flac"  ? Container::flac
                       : a.container == "ogg" ? Container::ogg
                       : a.container == "mp3" ? Container::mp3
                                              : Container::wav;
  o.format.encoding = a.encoding == "float32" ? SampleEncoding::float32
                      : a.encoding == "pcm24" ? SampleEncoding::pcm24
                                              : SampleEncoding::pcm16;
  return o;
}

// onda::audio::Separator: the model opened once, any number of files or arrays through it.
class PySeparator {
 public:
  explicit PySeparator(const AudioOptions& options) {
    const auto o = separate_options(options);
    py::gil_scoped_release release;
    if (options.stream) {
      streamer_ = std::make_unique<onda::audio::StreamEnhancer>(
          onda::audio::StreamEnhanceOptions{o.model, o.description, o.session, o.format});
    } else {
      separator_ = std::make_unique<onda::audio::Separator>(o);
    }
  }

  const onda::audio::ModelDescription& description() const {
    return streamer_ ? streamer_->description() : separator_->description();
  }
  int sample_rate() const { return description().sample_rate; }
  int channels() const { return description().channels; }
  std::vector<std::string> stems() const { return description().stems; }
  std::string adapter_name() const {
    return streamer_ ? streamer_->stream().session().adapter_name() : separator_->adapter_name();
  }

  // Stems in memory, at the model's rate and channel count: [(name, [channels, frames])].
  py::list separate(py::array samples, int sample_rate, const py::object& progress) {
    files_only_when_streaming();
    auto mix = to_audio(samples, sample_rate);
    std::vector<onda::audio::Stem> stems;
    {
      py::gil_scoped_release release;
      stems = separator_->separate(std::move(mix), nullptr, progress_callback(progress));
    }
    py::list result;
    for (auto& stem : stems) result.append(py::make_tuple(stem.name, from_audio(std::move(stem.audio))));
    return result;
  }

  std::vector<std::filesystem::path> separate_file(const std::filesystem::path& input,
                                                   const std::filesystem::path& output_dir,
                                                   const py::object& progress) {
    files_only_when_streaming();
    const auto callback = progress_callback(progress);
    py::gil_scoped_release release;
    return separator_->separate_file(input, output_dir, nullptr, callback);
  }

  std::vector<std::string> output_names() const {
    return streamer_ ? description().stems : separator_->output_names();
  }

  // The outputs of `input` (one per output_names() entry) to `paths`, whose folders exist: what
  // `python3 -m onda separate|enhance` calls once it has planned and checked every path.
  void write_files(const std::filesystem::path& input, const std::vector<std::filesystem::path>& paths,
                   const py::object& progress) {
    const auto callback = progress_callback(progress);
    py::gil_scoped_release release;
    if (streamer_)
      streamer_->write_files(input, paths, nullptr, callback);
    else
      separator_->write_files(input, paths, nullptr, callback);
  }

  void enhance_file(const std::filesystem::path& input, const std::filesystem::path& output,
                    const py::object& progress) {
    files_only_when_streaming();
    const auto callback = progress_callback(progress);
    py::gil_scoped_release release;
    separator_->enhance_file(input, output, nullptr, callback);
  }

 private:
  void files_only_when_streaming() const {
    if (streamer_)
      throw std::invalid_argument("a streaming Separator (stream=True) writes files only: use write_files");
  }
  // A Python callable(done, total) called with the GIL taken; None: no callback.
  static onda::audio::SegmentProgress progress_callback(const py::object& progress) {
    if (progress.is_none()) return {};
    return [progress](int64_t done, int64_t total) {
      py::gil_scoped_acquire gil;
      progress(done, total);
    };
  }

  std::unique_ptr<onda::audio::Separator> separator_;
  std::unique_ptr<onda::audio::StreamEnhancer> streamer_;  // instead, for AudioOptions::stream
};

py::array read_audio(const std::filesystem::path& path, int& sample_rate) {
  onda::audio::AudioBuffer buffer;
  {
    py::gil_scoped_release release;
    buffer = onda::audio::read_audio(path);
  }
  sample_rate = buffer.sample_rate;
  return from_audio(std::move(buffer));
}

}  // namespace

PYBIND11_MODULE(_onda, m) {
  m.doc() = "onda's C++ API for the onda Python package (use `import onda`).";
  m.attr("__version__") = ONDA_VERSION;

  // onda.Error (a RuntimeError) and one subclass per kind of failure, each with onda's message.
  static py::exception<std::runtime_error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception<ModelError>(m, "ModelError", error);
  py::register_exception<GpuError>(m, "GpuError", error);
  py::register_exception<AudioError>(m, "AudioError", error);
  py::register_exception<DescriptionError>(m, "DescriptionError", error);
  py::register_exception<onda::NpyError>(m, "NpyError", error);

  py::class_<PyDevice>(m, "Device")
      .def(py::init(&open_device), py::arg("adapter") = "")
      .def_property_readonly("adapter", [](const PyDevice& d) { return adapter_dict(d.device->adapter()); })
      .def_property_readonly("features", [](const PyDevice& d) { return d.device->features(); })
      .def("__eq__", [](const PyDevice& a, const PyDevice& b) { return a.device == b.device; })
      .def("__hash__", [](const PyDevice& d) { return std::hash<const void*>()(d.device.get()); });

  py::class_<PyDeviceTensor>(m, "DeviceTensor")
      .def_static("upload", &upload, py::arg("device"), py::arg("array"))
      .def_property_readonly("shape", &PyDeviceTensor::shape)
      .def_property_readonly("dtype", &PyDeviceTensor::dtype)
      .def_property_readonly("device", &PyDeviceTensor::device)
      .def("numpy", &PyDeviceTensor::numpy);

  py::class_<PySessionOptions>(m, "SessionOptions")
      .def(py::init<>())
      .def_readwrite("adapter", &PySessionOptions::adapter)
      .def_readwrite("profile", &PySessionOptions::profile)
      .def_readwrite("first_submit_dispatches", &PySessionOptions::first_submit_dispatches)
      .def_readwrite("tuning", &PySessionOptions::tuning)
      .def_readwrite("max_storage_binding_bytes", &PySessionOptions::max_storage_binding_bytes)
      .def_readwrite("memory_limit", &PySessionOptions::memory_limit);

  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, const PySessionOptions&, const std::optional<PyDevice>&>(),
           py::arg("model"), py::arg("options"), py::arg("device") = py::none())
      .def("inputs", &PySession::inputs, "[(name, numpy dtype name, shape with -1 for dynamic, dim names)]")
      .def("outputs", &PySession::outputs)
      .def("adapter_name", &PySession::adapter_name)
      .def("plan_memory", &PySession::plan_memory, py::arg("shapes"),
           "The static memory plan of these input shapes (dict), nothing run")
      .def("device", &PySession::device)
      .def("run", &PySession::run, py::arg("feed"), "{name: array} -> {name: array}, every output")
      .def("run_with", &PySession::run_with, py::arg("host_feed"), py::arg("device_feed"),
           py::arg("on_device"),
           "Host and device inputs -> every output, as arrays or (on_device) DeviceTensors")
      .def("last_run", &PySession::last_run)
      .def("set_profiling", &PySession::set_profiling);

  py::class_<AudioOptions>(m, "AudioOptions")
      .def(py::init<>())
      .def_readwrite("model", &AudioOptions::model)
      .def_readwrite("description", &AudioOptions::description)
      .def_readwrite("adapter", &AudioOptions::adapter)
      .def_readwrite("two_stems", &AudioOptions::two_stems)
      .def_readwrite("segment", &AudioOptions::segment)
      .def_readwrite("overlap", &AudioOptions::overlap)
      .def_readwrite("batch", &AudioOptions::batch)
      .def_readwrite("shifts", &AudioOptions::shifts)
      .def_readwrite("seed", &AudioOptions::seed)
      .def_readwrite("container", &AudioOptions::container)
      .def_readwrite("encoding", &AudioOptions::encoding)
      .def_readwrite("stream", &AudioOptions::stream);

  py::class_<PySeparator>(m, "Separator")
      .def(py::init<const AudioOptions&>())
      .def_property_readonly("sample_rate", &PySeparator::sample_rate)
      .def_property_readonly("channels", &PySeparator::channels)
      .def_property_readonly("stems", &PySeparator::stems)
      .def("adapter_name", &PySeparator::adapter_name)
      .def("separate", &PySeparator::separate, py::arg("samples"), py::arg("sample_rate"),
           py::arg("progress") = py::none())
      .def("separate_file", &PySeparator::separate_file, py::arg("input"), py::arg("output_dir"),
           py::arg("progress") = py::none())
      .def("enhance_file", &PySeparator::enhance_file, py::arg("input"), py::arg("output"),
           py::arg("progress") = py::none())
      .def("output_names", &PySeparator::output_names)
      .def("write_files", &PySeparator::write_files, py::arg("input"), py::arg("paths"),
           py::arg("progress") = py::none());

  m.def(
      "container_for_path",
      [](const std::filesystem::path& path) {
        return onda::audio::container_extension(onda::audio::container_for_path(path));
      },
      py::arg("path"), "The container a file name's extension asks for: 'wav', 'flac', 'ogg' or 'mp3'");
  m.def("readable_audio_extensions", &onda::audio::readable_audio_extensions,
        "Extensions of the audio files libsndfile reads (folders are scanned for these)");

  m.def(
      "read_audio",
      [](const std::filesystem::path& path) {
        int rate = 0;
        py::array samples = read_audio(path, rate);
        return py::make_tuple(samples, rate);
      },
      py::arg("path"), "(float32 [channels, frames], sample rate) of an audio file (libsndfile)");

  m.def(
      "describe_tuning",
      [](const std::string& adapter, const std::vector<std::string>& overrides) {
        onda::DeviceOptions options;
        options.adapter = adapter;
        py::gil_scoped_release release;
        return onda::describe_tuning(*onda::Device::open(options), overrides);
      },
      py::arg("adapter") = "", py::arg("overrides") = std::vector<std::string>{},
      "The kernel tuning a session uses on that adapter, one line per field (what `onda info` prints)");

  m.def("list_adapters", [] {
    py::list list;
    for (const auto& d : onda::Device::list_adapters()) list.append(adapter_dict(d));
    return list;
  });

  m.def(
      "read_tensor_proto",
      [](const std::filesystem::path& path) {
        std::string name;
        HostTensor tensor = onda::read_tensor_proto_file(path, &name);
        return py::make_tuple(name, to_numpy(std::move(tensor)));
      },
      py::arg("path"), "(name, array) of a serialized onnx.TensorProto (input_N.pb, output_N.pb)");

  m.def(
      "default_adapter",
      [](const std::string& adapter) {
        onda::DeviceOptions options;
        options.adapter = adapter;
        py::gil_scoped_release release;
        return onda::Device::open(options)->adapter().name;
      },
      py::arg("adapter") = "", "The name of the adapter a session would run on (creates a device)");
}
