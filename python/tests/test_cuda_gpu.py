# SPDX-License-Identifier: Apache-2.0
"""rmm._cuda.gpu, as RAPIDS code calls it: checked runtime calls that raise CUDARuntimeError."""

import pickle

import pytest

import rmm
from rmm._cuda import gpu

# cudaDevAttrMultiProcessorCount, cudaErrorInvalidDevice (their values in every CUDA release).
MULTIPROCESSOR_COUNT = 16
INVALID_DEVICE = 101


def test_versions_devices_and_names():
    assert gpu.getDeviceCount() >= 1
    assert 0 <= gpu.getDevice() < gpu.getDeviceCount()
    assert gpu.runtimeGetVersion() >= 13000
    assert gpu.driverGetVersion() >= gpu.runtimeGetVersion()
    assert isinstance(gpu.deviceGetName(0), str) and gpu.deviceGetName(0)


def test_an_attribute_is_read_for_a_device():
    assert gpu.getDeviceAttribute(MULTIPROCESSOR_COUNT, gpu.getDevice()) > 0


def test_set_device_switches_and_a_bad_device_raises_naming_the_error():
    current = gpu.getDevice()
    gpu.setDevice(current)
    assert gpu.getDevice() == current
    with pytest.raises(gpu.CUDARuntimeError, match="cudaErrorInvalidDevice") as raised:
        gpu.setDevice(gpu.getDeviceCount() + 7)
    assert raised.value.status == INVALID_DEVICE
    assert gpu.getDevice() == current, "a refused switch changes nothing"
    with pytest.raises(gpu.CUDARuntimeError):
        gpu.getDeviceAttribute(MULTIPROCESSOR_COUNT, gpu.getDeviceCount() + 7)
    # The failure is not left behind for an unrelated call to find.
    assert rmm.DeviceBuffer(size=8).size == 8


def test_errors_pickle_with_their_status():
    for error_type in (gpu.CUDARuntimeError, gpu.CUDADriverError):
        error = pickle.loads(pickle.dumps(error_type(INVALID_DEVICE)))
        assert type(error) is error_type and error.status == INVALID_DEVICE
        assert str(error) == "cudaErrorInvalidDevice: invalid device ordinal"
