# SPDX-License-Identifier: Apache-2.0
"""Thin, checked calls of the CUDA runtime, as RMM's ``rmm._cuda.gpu`` offers them: each returns
the runtime's answer and raises CUDARuntimeError (or CUDADriverError) with the runtime's error name
and description when the call fails.

Statuses are plain ints; they compare equal to the members of ``cuda.bindings.runtime.cudaError_t``.
An attribute may be a member of ``cuda.bindings.runtime.cudaDeviceAttr`` or its int value."""

from rmm import _rmm


class _CUDAError(RuntimeError):
    """A failed CUDA call: ``status`` is its error code, the message its name and description."""

    def __init__(self, status):
        self.status = status
        code = int(status)
        super().__init__(f"{_rmm._cuda_error_name(code)}: {_rmm._cuda_error_string(code)}")

    def __reduce__(self):
        return (type(self), (self.status,))


class CUDARuntimeError(_CUDAError):
    """A CUDA runtime call failed; ``status`` is its cudaError_t."""


class CUDADriverError(_CUDAError):
    """A CUDA call on the driver's side failed; ``status`` is its error code."""


def _checked(answer, error=CUDARuntimeError):
    status, value = answer
    if status != 0:
        raise error(status)
    return value


def driverGetVersion() -> int:
    """The driver's CUDA version, 1000 * major + 10 * minor (0 without a driver)."""
    return _checked(_rmm._cuda_driver_get_version())


def runtimeGetVersion() -> int:
    """The runtime's CUDA version, 1000 * major + 10 * minor."""
    return _checked(_rmm._cuda_runtime_get_version())


def getDevice() -> int:
    """The calling thread's current device."""
    return _checked(_rmm._cuda_get_device())


def setDevice(device: int) -> None:
    """Makes ``device`` the calling thread's current device."""
    status = _rmm._cuda_set_device(int(device))
    if status != 0:
        raise CUDARuntimeError(status)


def getDeviceCount() -> int:
    """How many devices the process sees."""
    return _checked(_rmm._cuda_get_device_count())


def getDeviceAttribute(attr, device: int) -> int:
    """The value of ``attr`` (a cudaDeviceAttr, or its int value) on ``device``."""
    return _checked(_rmm._cuda_get_device_attribute(int(attr), int(device)))


def getDeviceProperties(device: int):
    """``device``'s cudaDeviceProp, from cuda-python (``pip install cuda-bindings``), whose type it is."""
    try:
        from cuda.bindings import runtime
    except ImportError as error:
        raise ImportError(
            "rmm._cuda.gpu.getDeviceProperties returns cuda.bindings.runtime.cudaDeviceProp: "
            "install cuda-python (pip install cuda-bindings)"
        ) from error
    status, properties = runtime.cudaGetDeviceProperties(int(device))
    if status != runtime.cudaError_t.cudaSuccess:
        raise CUDARuntimeError(status)
    return properties


def deviceGetName(device: int) -> str:
    """``device``'s name, such as "NVIDIA H200"."""
    return _checked(_rmm._cuda_device_get_name(int(device)), CUDADriverError)
