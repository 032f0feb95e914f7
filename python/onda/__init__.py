"""onda: audio ONNX models (source separation, speech enhancement) on any GPU through WebGPU.

The inference API follows onnxruntime's, so that an existing script runs by changing its import::

    import onda as ort
    session = ort.InferenceSession("model.onnx", providers=["CUDAExecutionProvider"])
    outputs = session.run(None, {"mix": mix})            # a list of numpy arrays

and the audio tool (``onda separate`` / ``onda enhance``) is :func:`separate` and :func:`enhance`.
See docs/python.md.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _onda
from ._device import Device, DeviceTensor, IOBinding
from ._onda import AudioError, DescriptionError, Error, GpuError, ModelError, NpyError

# onnxruntime's name for a value handed to or taken from a session (host or device memory).
OrtValue = DeviceTensor

__version__: str = _onda.__version__

__all__ = [
    "__version__",
    "InferenceSession",
    "SessionOptions",
    "RunOptions",
    "GraphOptimizationLevel",
    "ExecutionMode",
    "ExecutionOrder",
    "NodeArg",
    "Device",
    "DeviceTensor",
    "OrtValue",
    "IOBinding",
    "ModelMetadata",
    "Separator",
    "separate",
    "enhance",
    "read_audio",
    "get_device",
    "list_adapters",
    "get_available_providers",
    "get_all_providers",
    "set_default_logger_severity",
    "set_default_logger_verbosity",
    "Error",
    "ModelError",
    "GpuError",
    "AudioError",
    "DescriptionError",
    "NpyError",
]

# The one provider onda is: every node runs on the GPU through WebGPU. A provider list passed to
# InferenceSession is accepted whatever it names (CUDA, CPU, ...), so that scripts run unchanged.
PROVIDER = "WebGpuExecutionProvider"

# onnxruntime's spelling of element types (NodeArg.type).
_ORT_TYPES = {
    "float32": "tensor(float)",
    "float16": "tensor(float16)",
    "int32": "tensor(int32)",
    "int64": "tensor(int64)",
    "uint8": "tensor(uint8)",
    "bool": "tensor(bool)",
}


# ---- onnxruntime's option classes: accepted, and (apart from what is listed) ignored -------------


class GraphOptimizationLevel(enum.IntEnum):
    """Accepted and ignored: onda always simplifies and fuses the graph for the input shapes."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted and ignored: a run is recorded and submitted to the GPU as a whole."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    """Accepted and ignored."""

    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


class _Options:
    """Holds any attribute and any config entry, as onnxruntime's option objects do."""

    def __init__(self, **values: Any) -> None:
        self._config: Dict[str, str] = {}
        for key, value in values.items():
            setattr(self, key, value)

    def add_session_config_entry(self, key: str, value: str) -> None:
        self._config[key] = value

    def get_session_config_entry(self, key: str) -> str:
        return self._config[key]

    add_run_config_entry = add_session_config_entry
    get_run_config_entry = get_session_config_entry

    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        """Accepted and ignored: onda binds dynamic dimensions from the inputs of each run."""

    def add_free_dimension_override_by_denotation(self, name: str, value: int) -> None:
        """Accepted and ignored."""

    def register_custom_ops_library(self, path: str) -> None:
        raise Error(f"onda has no custom op libraries ({path})")


class SessionOptions(_Options):
    """onnxruntime.SessionOptions. Read by onda: ``enable_profiling`` (GPU time per node, see
    :meth:`InferenceSession.last_run`) and onda's own ``first_submit_dispatches`` (dispatches in
    the first of a run's growing submits; 0: one submit per run), ``tuning`` (kernel tuning
    overrides, "family.field=value" strings as ``onda run --tuning``) and
    ``max_storage_binding_bytes`` (run as on an adapter with smaller bindings; 0: the adapter's) and
    ``memory_limit`` (GPU bytes a run may use, weights included; 0: no limit; a plan over it raises
    onda.ModelError naming the node at its peak).
    Accepted and ignored: ``graph_optimization_level``,
    ``intra_op_num_threads``, ``inter_op_num_threads``, ``execution_mode``, ``execution_order``,
    ``log_severity_level``, ``log_verbosity_level``, ``logid``, ``optimized_model_filepath``,
    ``enable_cpu_mem_arena``, ``enable_mem_pattern``, ``enable_mem_reuse``, ``use_deterministic_compute``,
    ``profile_file_prefix``, config entries, free dimension overrides, and any other attribute."""

    def __init__(self, **values: Any) -> None:
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order = ExecutionOrder.DEFAULT
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.optimized_model_filepath = ""
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.first_submit_dispatches: Optional[int] = None  # None: onda's default (16)
        self.tuning: List[str] = []
        self.max_storage_binding_bytes = 0
        self.memory_limit = 0
        super().__init__(**values)


class RunOptions(_Options):
    """onnxruntime.RunOptions: accepted and ignored (``log_severity_level``, ``log_verbosity_level``,
    ``logid``, ``terminate``, ``only_execute_path_to_fetches``, config entries, any attribute)."""

    def __init__(self, **values: Any) -> None:
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False
        super().__init__(**values)


def set_default_logger_severity(level: int) -> None:
    """Accepted and ignored (onda reports through exceptions, not a log)."""


def set_default_logger_verbosity(level: int) -> None:
    """Accepted and ignored."""


def get_available_providers() -> List[str]:
    """The execution providers onda offers: one, WebGPU."""
    return [PROVIDER]


def get_all_providers() -> List[str]:
    return [PROVIDER]


# ---- devices -------------------------------------------------------------------------------------


def list_adapters() -> List[Dict[str, Any]]:
    """Every GPU adapter this machine offers, as dicts with index, name, vendor, backend, type and
    driver (what ``onda info --list`` prints). An ``adapter=`` argument takes the index or a
    case-insensitive substring of the name."""
    return _onda.list_adapters()


_device_names: Dict[str, str] = {}


def get_device(adapter: Union[str, int, None] = None) -> str:
    """The name of the adapter a session runs on (by default: ``ONDA_ADAPTER`` if set, else the
    high-performance adapter), e.g. 'NVIDIA H200' or 'llvmpipe (LLVM 15.0.6, 256 bits)'.
    (onnxruntime's get_device() answers 'CPU' or 'GPU'; onda always runs on the adapter named.)"""
    key = "" if adapter is None else str(adapter)
    if key not in _device_names:
        _device_names[key] = _onda.default_adapter(key)
    return _device_names[key]


# ---- InferenceSession ----------------------------------------------------------------------------


class NodeArg:
    """An input or output of a model: ``name``, ``type`` ('tensor(float)', ...) and ``shape``, as
    onnxruntime spells it: an int per known dimension, the model's symbolic name (a str, e.g.
    'batch') for a named dynamic one, None for an unnamed unknown one."""

    __slots__ = ("name", "type", "shape", "dtype")

    def __init__(self, name: str, dtype: str, shape: Sequence[int], dim_names: Sequence[str] = ()) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)  # the numpy dtype (onda's addition)
        self.type = _ORT_TYPES[dtype]
        names = list(dim_names) if len(dim_names) == len(shape) else [""] * len(shape)
        self.shape: List[Union[int, str, None]] = [d if d >= 0 else (n or None) for d, n in zip(shape, names)]

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """onnxruntime's ModelMetadata: producer_name, graph_name, domain, description, version,
    graph_description and custom_metadata_map (read with the onnx package when it is installed;
    empty otherwise)."""

    def __init__(self, model: Any = None) -> None:
        self.producer_name = getattr(model, "producer_name", "")
        self.domain = getattr(model, "domain", "")
        self.description = getattr(model, "doc_string", "")
        self.version = getattr(model, "model_version", 0)
        graph = getattr(model, "graph", None)
        self.graph_name = getattr(graph, "name", "")
        self.graph_description = getattr(graph, "doc_string", "")
        self.custom_metadata_map = {p.key: p.value for p in getattr(model, "metadata_props", [])}


def _adapter_from_providers(providers: Any, provider_options: Any) -> str:
    """An adapter named in a provider's options: {'adapter': index or name} or {'device_id': n}."""
    options: List[Mapping[str, Any]] = []
    for p in providers or []:
        if isinstance(p, (tuple, list)) and len(p) == 2 and isinstance(p[1], Mapping):
            options.append(p[1])
    options.extend(o for o in (provider_options or []) if isinstance(o, Mapping))
    for o in options:
        for key in ("adapter", "device_id"):
            if key in o and o[key] is not None and str(o[key]) != "":
                return str(o[key])
    return ""


class InferenceSession:
    """A model opened on the GPU, run any number of times (onnxruntime.InferenceSession).

    ``path_or_bytes``: a file name (str or PathLike) or the model's serialized bytes.
    ``sess_options``, ``providers``, ``provider_options``: accepted as onnxruntime does; onda runs
    every node on the GPU whatever the providers name. The adapter comes from ``adapter=`` (index
    or name substring), else from a provider option ``adapter`` or ``device_id``, else the default
    (``ONDA_ADAPTER`` or the high-performance adapter). ``device=``: an :class:`onda.Device` the
    session shares with others (then ``adapter`` and the providers' choice are not read), so that
    their :class:`DeviceTensor` values pass between them; by default a session has its own.
    Errors raise :class:`onda.Error` subclasses with onda's messages.
    """

    def __init__(
        self,
        path_or_bytes: Union[str, bytes, "os.PathLike[str]"],
        sess_options: Optional[SessionOptions] = None,
        providers: Optional[Sequence[Any]] = None,
        provider_options: Optional[Sequence[Mapping[str, Any]]] = None,
        adapter: Union[str, int, None] = None,
        device: Optional[Device] = None,
        **kwargs: Any,
    ) -> None:
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._providers = list(providers) if providers else [PROVIDER]
        chosen = str(adapter) if adapter is not None else _adapter_from_providers(providers, provider_options)
        options = _native_options(self._sess_options, chosen)
        if device is not None and not isinstance(device, Device):
            raise TypeError(f"device= takes an onda.Device, got {type(device).__name__}")
        native_device = device._device if device is not None else None
        self._model_bytes: Optional[bytes] = None
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_bytes = bytes(path_or_bytes)
            self._model_path = ""
            self._session = _onda.Session(self._model_bytes, options, native_device)
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            self._session = _onda.Session(self._model_path, options, native_device)
        else:
            raise TypeError(f"InferenceSession needs a file name or the model's bytes, got {type(path_or_bytes).__name__}")
        self._inputs = [NodeArg(*spec) for spec in self._session.inputs()]
        self._outputs = [NodeArg(*spec) for spec in self._session.outputs()]
        self._input_names = [i.name for i in self._inputs]
        self._input_dtypes = {i.name: i.dtype for i in self._inputs}
        self._output_names = [o.name for o in self._outputs]
        self._meta: Optional[ModelMetadata] = None

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Always empty: initializers are uploaded and prepared once, not overridable per run."""
        return []

    def get_providers(self) -> List[str]:
        return [PROVIDER]

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {PROVIDER: {"adapter": self._session.adapter_name()}}

    def get_session_options(self) -> SessionOptions:
        return self._sess_options

    def set_providers(self, providers: Optional[Sequence[Any]] = None, provider_options: Any = None) -> None:
        """Accepted and ignored (the session stays on its adapter)."""

    def disable_fallback(self) -> None:
        """Accepted and ignored: onda never falls back to the CPU."""

    def enable_fallback(self) -> None:
        """Accepted and ignored."""

    def end_profiling(self) -> str:
        """onda writes no profile file: GPU time per node is in last_run()['profile']."""
        return ""

    def get_profiling_start_time_ns(self) -> int:
        return 0

    def get_modelmeta(self) -> ModelMetadata:
        """The model's metadata, read with the onnx package (installed with python3-onnx) when
        available; empty fields otherwise."""
        if self._meta is None:
            model = None
            try:
                import onnx  # optional: only for the metadata

                if self._model_bytes is not None:
                    model = onnx.load_model_from_string(self._model_bytes, load_external_data=False)
                else:
                    model = onnx.load(self._model_path, load_external_data=False)
            except ImportError:
                pass
            self._meta = ModelMetadata(model)
        return self._meta

    @property
    def adapter(self) -> str:
        """The name of the adapter the session runs on."""
        return self._session.adapter_name()

    def run(
        self,
        output_names: Optional[Sequence[str]],
        input_feed: Mapping[str, Any],
        run_options: Optional[RunOptions] = None,
    ) -> List[np.ndarray]:
        """Runs the model on ``input_feed`` ({input name: array}) and returns the outputs named in
        ``output_names`` (None or empty: all, in the model's order) as numpy arrays, in that order.
        C-contiguous float32/float16/int32/int64/uint8/bool arrays are read without a copy; other
        layouts are converted. A value may also be a :class:`DeviceTensor` (read on the GPU). The
        GIL is released while the GPU runs."""
        for name in input_feed:
            self._check_input_name(name)
        wanted = list(output_names) if output_names else self._output_names
        for name in wanted:
            self._check_output_name(name)
        host_feed = {n: v for n, v in input_feed.items() if not isinstance(v, DeviceTensor)}
        device_feed = {}
        for name, value in input_feed.items():
            if isinstance(value, DeviceTensor):
                if value.on_host:
                    host_feed[name] = value._host
                else:
                    device_feed[name] = value._gpu_for(self._session.device())
        if device_feed:
            outputs = self._session.run_with(self._typed_feed(host_feed), device_feed, False)
        else:
            outputs = self._session.run(self._typed_feed(host_feed))
        return [outputs[name] for name in wanted]

    def run_with_ort_values(
        self,
        output_names: Optional[Sequence[str]],
        input_dict_ort_values: Mapping[str, Any],
        run_options: Optional[RunOptions] = None,
    ) -> List[DeviceTensor]:
        """onnxruntime's ``run_with_ort_values``: inputs as :class:`DeviceTensor` values (or
        arrays), the outputs named (None: all) as GPU :class:`DeviceTensor` values, nothing read back."""
        binding = self.io_binding()
        for name, value in input_dict_ort_values.items():
            binding.bind_input(name, value)
        for name in output_names or self._output_names:
            binding.bind_output(name, "webgpu")
        self.run_with_iobinding(binding, run_options)
        return binding.get_outputs()

    def io_binding(self) -> IOBinding:
        """onnxruntime's I/O binding: inputs and outputs bound once (outputs may stay on the GPU),
        then :meth:`run_with_iobinding`. See :class:`IOBinding`."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options: Optional[RunOptions] = None) -> None:
        """Runs the model on ``iobinding``'s inputs; its outputs are then in
        ``iobinding.get_outputs()`` / ``copy_outputs_to_cpu()``."""
        if iobinding._session is not self:
            raise Error("run_with_iobinding: the binding belongs to another session (make it with this session's io_binding())")
        iobinding._run()

    @property
    def device(self) -> Device:
        """The :class:`Device` the session runs on (pass it as ``device=`` to share it)."""
        return Device._wrap(self._session.device())

    def _check_input_name(self, name: str) -> None:
        if name not in self._input_names:
            raise ModelError(f"'{name}' is not an input of the model (its inputs: {', '.join(self._input_names)})")

    def _check_output_name(self, name: str) -> None:
        if name not in self._output_names:
            raise ModelError(f"'{name}' is not an output of the model (its outputs: {', '.join(self._output_names)})")

    def _typed_feed(self, feed: Mapping[str, Any]) -> Dict[str, Any]:
        # Lists and scalars become arrays of the input's dtype (arrays keep theirs: a wrong one is an error).
        return {
            name: value if isinstance(value, np.ndarray) else np.asarray(value, dtype=self._input_dtypes[name])
            for name, value in feed.items()
        }

    def last_run(self) -> Dict[str, Any]:
        """Statistics of the last run (onda's RunStats): wall_ms, record_ms, gpu_wait_ms,
        dispatches, submits, peak_gpu_bytes, peak_activation_bytes, weight_bytes,
        buffers_allocated, held_buffers_allocated and buffer_create_ms (the buffers a first run
        creates, and createBuffer's CPU time), host_upload_bytes and host_download_bytes (what
        crossed between host and GPU memory: DeviceTensor inputs and outputs cross nothing),
        record_ms_by_op and, with
        profiling on, profile: [(op type, node, GPU ms, dispatches, input shapes)], most expensive
        first, profile_span_ms and profile_floor_ms."""
        return self._session.last_run()

    def set_profiling(self, on: bool) -> None:
        """GPU time per node for later runs (slower: each dispatch its own pass)."""
        self._session.set_profiling(on)


def _native_options(options: Any, adapter: str) -> "_onda.SessionOptions":
    """onda's SessionOptions from an onnxruntime-style SessionOptions (the attributes onda reads)."""
    native = _onda.SessionOptions()
    native.adapter = adapter
    native.profile = bool(getattr(options, "enable_profiling", False))
    first_submit = getattr(options, "first_submit_dispatches", None)
    if first_submit is not None:
        native.first_submit_dispatches = int(first_submit)
    native.tuning = [str(t) for t in (getattr(options, "tuning", None) or [])]
    native.max_storage_binding_bytes = int(getattr(options, "max_storage_binding_bytes", 0) or 0)
    native.memory_limit = int(getattr(options, "memory_limit", 0) or 0)
    return native


# ---- the audio tool ------------------------------------------------------------------------------

AudioInput = Union[str, "os.PathLike[str]", np.ndarray]
Progress = Optional[Callable[[int, int], None]]


def read_audio(path: Union[str, "os.PathLike[str]"]) -> Tuple[np.ndarray, int]:
    """An audio file (WAV, FLAC, OGG, ... through libsndfile) as (float32 [channels, frames], rate)."""
    return _onda.read_audio(os.fspath(path))


class Separator:
    """A separation or enhancement model opened once (``onda separate`` / ``onda enhance``), for any
    number of files or arrays. The options are the command line's (docs/audio.md):

    ``description`` (a JSON file instead of the sidecar / metadata), ``segment`` (seconds; models
    with a dynamic length), ``overlap`` (default: the description's, else 0.25), ``batch``,
    ``shifts``, ``seed``, ``two_stems`` (NAME: NAME and no_NAME), ``float32`` / ``int24`` / ``flac``
    (format of written files), ``adapter``, ``stream`` (a streaming model run frame by frame, its
    states fed back on the GPU, as ``onda enhance --stream``; files only).
    """

    def __init__(
        self,
        model: Union[str, "os.PathLike[str]"],
        *,
        description: Union[str, "os.PathLike[str]", None] = None,
        segment: float = 0.0,
        overlap: Optional[float] = None,
        batch: int = 1,
        shifts: int = 0,
        seed: int = 0,
        two_stems: Optional[str] = None,
        float32: bool = False,
        int24: bool = False,
        flac: bool = False,
        adapter: Union[str, int, None] = None,
        stream: bool = False,
        _container: Optional[str] = None,
    ) -> None:
        # The command line's checks and messages (tools/separate_command.cpp).
        if float32 and int24:
            raise ValueError("--float32 and --int24 exclude each other")
        if flac and float32:
            raise ValueError("--flac stores 16 or 24-bit integers: drop --float32")
        container = _container or ("flac" if flac else "wav")
        if container == "flac" and float32:
            raise ValueError("FLAC stores 16 or 24-bit integers: drop --float32")
        options = _onda.AudioOptions()
        options.model = os.fspath(model)
        options.description = os.fspath(description) if description is not None else ""
        options.adapter = "" if adapter is None else str(adapter)
        options.two_stems = two_stems or ""
        options.segment = float(segment)
        options.overlap = overlap
        options.batch = int(batch)
        options.shifts = int(shifts)
        options.seed = int(seed)
        options.container = container
        options.encoding = "float32" if float32 else "pcm24" if int24 else "pcm16"
        options.stream = bool(stream)
        self._separator = _onda.Separator(options)

    @property
    def sample_rate(self) -> int:
        """The model's sample rate: arrays returned are at this rate."""
        return self._separator.sample_rate

    @property
    def channels(self) -> int:
        return self._separator.channels

    @property
    def stems(self) -> List[str]:
        return self._separator.stems

    @property
    def output_names(self) -> List[str]:
        """The names of the outputs one input gives: the stems, or NAME and no_NAME (two_stems)."""
        return self._separator.output_names()

    def separate(
        self, audio: AudioInput, out: Union[str, "os.PathLike[str]", None] = None, *,
        sample_rate: Optional[int] = None, progress: Progress = None,
    ) -> Dict[str, np.ndarray]:
        """Stems of a file or an array ([channels, frames] or [frames] float, with ``sample_rate``),
        as {stem: float32 [channels, frames]} at the model's rate and channels. With ``out`` (a file
        input only), writes ``out/<file name>/<stem>.wav`` exactly as ``onda separate`` does, and
        returns the written files' samples."""
        if out is not None:
            if isinstance(audio, np.ndarray):
                raise ValueError("out= needs an input file (stems go to OUT/<file name>/): pass a path, or write the arrays")
            paths = self._separator.separate_file(os.fspath(audio), os.fspath(out), progress)
            return {Path(p).stem: read_audio(p)[0] for p in paths}
        samples, rate = self._samples(audio, sample_rate)
        return dict(self._separator.separate(samples, rate, progress))

    def enhance(
        self, audio: AudioInput, out: Union[str, "os.PathLike[str]", None] = None, *,
        sample_rate: Optional[int] = None, progress: Progress = None,
    ) -> np.ndarray:
        """The one output stem of an enhancement model, float32 [channels, frames] at the model's
        rate. With ``out`` (a file input only), writes that file exactly as ``onda enhance`` does
        and returns its samples."""
        if out is not None:
            if isinstance(audio, np.ndarray):
                raise ValueError("out= needs an input file: pass a path, or write the array")
            self._separator.enhance_file(os.fspath(audio), os.fspath(out), progress)
            return read_audio(out)[0]
        if len(self.stems) != 1:
            raise DescriptionError(
                f"enhance needs a model with one output stem; this one has {len(self.stems)} "
                f"({', '.join(self.stems)}): use separate"
            )
        samples, rate = self._samples(audio, sample_rate)
        return self._separator.separate(samples, rate, progress)[0][1]

    @staticmethod
    def _samples(audio: AudioInput, sample_rate: Optional[int]) -> Tuple[np.ndarray, int]:
        if isinstance(audio, np.ndarray):
            if sample_rate is None:
                raise ValueError("an audio array needs sample_rate=")
            return audio, int(sample_rate)
        return read_audio(audio)


def separate(audio: AudioInput, model: Union[str, "os.PathLike[str]"], out: Union[str, "os.PathLike[str]", None] = None,
             *, sample_rate: Optional[int] = None, progress: Progress = None, **options: Any) -> Dict[str, np.ndarray]:
    """``onda separate``: the stems of ``audio`` (a file or an array with ``sample_rate``) through
    ``model``, as {stem: float32 [channels, frames]}; with ``out``, also the files
    ``out/<file name>/<stem>.wav``. ``options``: those of :class:`Separator`."""
    return Separator(model, **options).separate(audio, out, sample_rate=sample_rate, progress=progress)


def enhance(audio: AudioInput, model: Union[str, "os.PathLike[str]"], out: Union[str, "os.PathLike[str]", None] = None,
            *, sample_rate: Optional[int] = None, progress: Progress = None, **options: Any) -> np.ndarray:
    """``onda enhance``: ``audio`` through a one-stem (enhancement) model, float32 [channels,
    frames]; with ``out``, also that file (.wav, .flac or .ogg by its extension, as the command
    line). ``options``: those of :class:`Separator` (no two_stems)."""
    if out is not None:
        # As the command line: the container follows the output's extension (.flac, .ogg).
        extension = Path(os.fspath(out)).suffix
        if extension in (".flac", ".ogg"):
            options["_container"] = extension[1:]
    return Separator(model, **options).enhance(audio, out, sample_rate=sample_rate, progress=progress)
