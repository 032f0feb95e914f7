"""GPU memory from Python: :class:`Device` (one adapter's GPU context, shareable by sessions),
:class:`DeviceTensor` (onnxruntime's ``OrtValue``: a value on the GPU or on the host) and
:class:`IOBinding` (onnxruntime's ``session.io_binding()``), so that the state of a streaming model
stays on the GPU from one run to the next. See docs/python.md, "Device tensors and I/O binding"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _onda
from ._onda import Error

if TYPE_CHECKING:  # pragma: no cover
    from . import InferenceSession

# onnxruntime's device_type names for host memory; any other name ("cuda", "gpu", "webgpu",
# "dml", ...) means GPU memory, as onnxruntime's scripts ask for it.
_HOST_DEVICE_TYPES = ("cpu",)


def _on_host(device_type: Optional[str]) -> bool:
    return device_type is None or str(device_type).lower() in _HOST_DEVICE_TYPES


class Device:
    """One GPU adapter's WebGPU device (``onda::Device``). Sessions opened with the same
    ``device=`` share it, so that a :class:`DeviceTensor` output of one is an input of another
    without a trip through host memory; runs of sessions on one device are serialised.

    ``adapter``: index or case-insensitive name substring (``onda.list_adapters()``); None: the
    default (``ONDA_ADAPTER``, else the high-performance adapter)."""

    def __init__(self, adapter: Union[str, int, None] = None) -> None:
        self._device = _onda.Device("" if adapter is None else str(adapter))

    @classmethod
    def _wrap(cls, device: "_onda.Device") -> "Device":
        wrapped = cls.__new__(cls)
        wrapped._device = device
        return wrapped

    @property
    def name(self) -> str:
        """The adapter's name, e.g. 'NVIDIA H200'."""
        return self._device.adapter["name"]

    @property
    def adapter(self) -> Dict[str, Any]:
        """index, name, vendor, backend, type and driver of the adapter (as ``list_adapters()``)."""
        return self._device.adapter

    @property
    def features(self) -> List[str]:
        """The optional WebGPU features in use, e.g. 'shader-f16', 'subgroups'."""
        return self._device.features

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and self._device == other._device

    def __hash__(self) -> int:
        return hash(self._device)

    def __repr__(self) -> str:
        return f"onda.Device({self.name!r})"


class _Shape(tuple):
    """A shape as numpy gives it (a tuple), also callable as onnxruntime's ``OrtValue.shape()``."""

    def __call__(self) -> List[int]:
        return list(self)


_ORT_ELEMENT_TYPES = {
    "float32": "tensor(float)",
    "float16": "tensor(float16)",
    "int32": "tensor(int32)",
    "int64": "tensor(int64)",
    "uint8": "tensor(uint8)",
    "bool": "tensor(bool)",
}


class DeviceTensor:
    """A tensor in GPU memory of one :class:`Device` (``onda::DeviceTensor``), or in host memory
    (an ``OrtValue`` on 'cpu'); onnxruntime's ``OrtValue`` under onda's name (``onda.OrtValue`` is
    this class).

    ``.numpy()`` copies the values to a numpy array (for a GPU tensor: waits for the GPU and reads
    them back); ``.shape`` is a tuple (``.shape()`` also works, as onnxruntime's method);
    ``.dtype`` the numpy dtype; ``.device_name()`` 'webgpu' or 'cpu'. A GPU tensor is immutable:
    no run writes into it, so it can be fed to any number of runs."""

    __slots__ = ("_host", "_gpu", "_pending")

    def __init__(self) -> None:
        raise TypeError("make a DeviceTensor with DeviceTensor.from_numpy or OrtValue.ortvalue_from_numpy")

    @classmethod
    def _make(cls, host: Optional[np.ndarray] = None, gpu: Any = None, pending: bool = False) -> "DeviceTensor":
        value = object.__new__(cls)
        value._host = host  # the values in host memory (a 'cpu' value, or one not uploaded yet)
        value._gpu = gpu  # _onda.DeviceTensor: the values in GPU memory
        value._pending = pending  # meant for the GPU; uploaded to the device of the first session it meets
        return value

    # ---- making one --------------------------------------------------------------------------

    @classmethod
    def from_numpy(cls, array: Any, device: Union[Device, "InferenceSession", None] = None) -> "DeviceTensor":
        """``array`` copied to GPU memory of ``device`` (a :class:`Device` or a session, whose device
        it then is); None: uploaded to the device of the first session that reads it. int64 values
        must fit int32 (the GPU's storage). The array may change afterwards: this is a copy."""
        array = np.ascontiguousarray(array)
        if device is None:
            return cls._make(host=array.copy(), pending=True)
        return cls._make(gpu=_onda.DeviceTensor.upload(_device_of(device), array))

    @classmethod
    def ortvalue_from_numpy(cls, array: Any, device_type: str = "cpu", device_id: int = 0) -> "DeviceTensor":
        """onnxruntime's ``OrtValue.ortvalue_from_numpy``: 'cpu' keeps the array in host memory (no
        copy); any other device_type ('cuda', 'webgpu', ...) makes a GPU tensor, uploaded to the
        device of the first session that reads it. ``device_id`` is accepted and ignored (choose
        the adapter with the session's ``adapter=`` or ``device=``)."""
        if _on_host(device_type):
            return cls._make(host=np.asarray(array))
        return cls.from_numpy(array)

    @classmethod
    def ortvalue_from_shape_and_type(
        cls, shape: Sequence[int], element_type: Any = np.float32, device_type: str = "cpu", device_id: int = 0
    ) -> "DeviceTensor":
        """onnxruntime's ``OrtValue.ortvalue_from_shape_and_type``: a zero-filled value (a state's
        initial value, say) on the host or, for a GPU device_type, on the GPU."""
        return cls.ortvalue_from_numpy(np.zeros(tuple(shape), dtype=element_type), device_type, device_id)

    # ---- reading it --------------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The values as a numpy array (a copy for a GPU tensor: waits for the GPU)."""
        if self._gpu is not None:
            return self._gpu.numpy()
        return self._host

    @property
    def shape(self) -> _Shape:
        return _Shape(self._gpu.shape if self._gpu is not None else self._host.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._gpu.dtype) if self._gpu is not None else self._host.dtype

    def data_type(self) -> str:
        """onnxruntime's spelling of the element type, e.g. 'tensor(float)'."""
        return _ORT_ELEMENT_TYPES[self.dtype.name]

    def element_type(self) -> type:
        return self.dtype.type

    def device_name(self) -> str:
        """'webgpu' for GPU memory, 'cpu' for host memory."""
        return "cpu" if self.on_host else "webgpu"

    @property
    def on_host(self) -> bool:
        return self._gpu is None and not self._pending

    @property
    def device(self) -> Optional[Device]:
        """The :class:`Device` holding a GPU tensor (None: host memory, or not uploaded yet)."""
        return Device._wrap(self._gpu.device) if self._gpu is not None else None

    def is_tensor(self) -> bool:
        return True

    def has_value(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"onda.DeviceTensor(shape={list(self.shape)}, dtype={self.dtype.name}, on={self.device_name()})"

    # ---- for sessions ------------------------------------------------------------------------

    def _gpu_for(self, device: "_onda.Device") -> Any:
        """The GPU tensor, uploaded to ``device`` first if it is still pending."""
        if self._gpu is None:
            self._gpu = _onda.DeviceTensor.upload(device, self._host)
            self._host, self._pending = None, False
        return self._gpu

    def _assign(self, other: "DeviceTensor") -> None:
        """Becomes ``other`` (an output bound with bind_ortvalue_output receives the run's value)."""
        self._host, self._gpu, self._pending = other._host, other._gpu, other._pending


def _device_of(device: Union[Device, "InferenceSession"]) -> "_onda.Device":
    if isinstance(device, Device):
        return device._device
    native = getattr(device, "_session", None)
    if native is None:
        raise TypeError(f"device= takes an onda.Device or an InferenceSession, got {type(device).__name__}")
    return native.device()


class IOBinding:
    """onnxruntime's ``IOBinding`` (``session.io_binding()``): inputs and outputs bound once and
    the model run with ``session.run_with_iobinding(binding)``. An output bound to a GPU
    device_type (or to a GPU :class:`DeviceTensor` with ``bind_ortvalue_output``) stays in GPU
    memory: bind it as the next run's input and a streaming model's state never leaves the GPU.

    Raw device pointers (``buffer_ptr``) are CUDA's; onda's GPU memory is WebGPU's, so they are
    refused with an error naming the alternative. Outputs are fresh tensors each run (GPU tensors
    are immutable); ``bind_ortvalue_output``'s object is updated to hold the new value."""

    def __init__(self, session: "InferenceSession") -> None:
        self._session = session
        self._inputs: Dict[str, Union[np.ndarray, DeviceTensor]] = {}
        self._outputs: Dict[str, Tuple[bool, Optional[DeviceTensor]]] = {}  # name: (on GPU, value to update)
        self._results: List[DeviceTensor] = []

    # ---- inputs ------------------------------------------------------------------------------

    def bind_cpu_input(self, name: str, arr_on_cpu: Any) -> None:
        """A numpy array (read at run time, not copied now: onnxruntime's semantics)."""
        self._session._check_input_name(name)
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_ortvalue_input(self, name: str, ortvalue: DeviceTensor) -> None:
        """A :class:`DeviceTensor` (GPU or host memory)."""
        self._session._check_input_name(name)
        if not isinstance(ortvalue, DeviceTensor):
            raise TypeError(f"bind_ortvalue_input('{name}', ...) takes an onda.DeviceTensor, got {type(ortvalue).__name__}")
        self._inputs[name] = ortvalue

    def bind_input(self, name: str, device_type: Any = "cpu", device_id: int = 0, element_type: Any = None,
                   shape: Optional[Sequence[int]] = None, buffer_ptr: Optional[int] = None) -> None:
        """onnxruntime's ``bind_input(name, device_type, device_id, element_type, shape, buffer_ptr)``
        needs a raw device pointer, which WebGPU memory has not: refused with an error. As onda's
        shorthand, ``bind_input(name, value)`` binds a numpy array or a :class:`DeviceTensor`."""
        if isinstance(device_type, DeviceTensor):
            self.bind_ortvalue_input(name, device_type)
        elif isinstance(device_type, (np.ndarray, list, tuple)):
            self.bind_cpu_input(name, device_type)
        else:
            raise Error(f"bind_input('{name}'): onda's GPU memory is WebGPU's, not addressable by a raw pointer "
                        "(buffer_ptr): bind an onda.DeviceTensor (bind_ortvalue_input) or a numpy array (bind_cpu_input)")

    # ---- outputs -----------------------------------------------------------------------------

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0, element_type: Any = None,
                    shape: Optional[Sequence[int]] = None, buffer_ptr: Optional[int] = None) -> None:
        """Output ``name`` to host memory ('cpu') or left on the GPU (any other device_type: 'cuda',
        'webgpu', ...). element_type and shape are accepted (onda knows them from the model); a
        buffer_ptr is refused (see the class)."""
        self._session._check_output_name(name)
        if buffer_ptr is not None:
            raise Error(f"bind_output('{name}'): onda cannot write into a raw device pointer (buffer_ptr); "
                        "bind the output to a device_type and read it from get_outputs()")
        self._outputs[name] = (not _on_host(device_type), None)

    def bind_ortvalue_output(self, name: str, ortvalue: DeviceTensor) -> None:
        """Output ``name`` into ``ortvalue``: after each run the object holds the new value, in GPU
        memory if it was a GPU tensor, else in host memory."""
        self._session._check_output_name(name)
        if not isinstance(ortvalue, DeviceTensor):
            raise TypeError(f"bind_ortvalue_output('{name}', ...) takes an onda.DeviceTensor, got {type(ortvalue).__name__}")
        self._outputs[name] = (not ortvalue.on_host, ortvalue)

    # ---- results and housekeeping ------------------------------------------------------------

    def get_outputs(self) -> List[DeviceTensor]:
        """The last run's bound outputs, in the order they were bound."""
        return list(self._results)

    def copy_outputs_to_cpu(self) -> List[np.ndarray]:
        """The last run's bound outputs as numpy arrays (GPU ones read back)."""
        return [value.numpy() for value in self._results]

    def get_outputs_as_ortvaluevector(self) -> List[DeviceTensor]:
        return self.get_outputs()

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()
        self._results = []

    def synchronize_inputs(self) -> None:
        """Nothing to do: a run reads its inputs in order."""

    def synchronize_outputs(self) -> None:
        """Nothing to do: a run returns once the GPU is done."""

    def _run(self) -> None:
        """Runs the session on the bound values (InferenceSession.run_with_iobinding)."""
        if not self._outputs:
            raise Error("run_with_iobinding: no output is bound (bind_output or bind_ortvalue_output)")
        native = self._session._session
        host_feed: Dict[str, Any] = {}
        device_feed: Dict[str, Any] = {}
        for name, value in self._inputs.items():
            if isinstance(value, DeviceTensor):
                if value.on_host:
                    host_feed[name] = value._host
                else:
                    device_feed[name] = value._gpu_for(native.device())
            else:
                host_feed[name] = value
        on_gpu = any(gpu for gpu, _ in self._outputs.values())
        outputs = native.run_with(self._session._typed_feed(host_feed), device_feed, on_gpu)
        results = []
        for name, (gpu, target) in self._outputs.items():
            out = outputs[name]
            if on_gpu:
                value = DeviceTensor._make(gpu=out) if gpu else DeviceTensor._make(host=out.numpy())
            else:
                value = DeviceTensor._make(host=out)
            if target is not None:
                target._assign(value)
                value = target
            results.append(value)
        self._results = results
