# SPDX-License-Identifier: Apache-2.0
"""rmm.DeviceBuffer: sizes, host and device copies, streams, __cuda_array_interface__, adoption."""

import copy
import copy as copy_module
import pickle

import numpy as np
import pytest

import rmm
from rmm.pylibrmm.device_buffer import copy_device_to_ptr, copy_host_to_ptr, copy_ptr_to_host
from rmm.pylibrmm.stream import DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM, Stream


def test_size_ptr_and_nbytes():
    buf = rmm.DeviceBuffer(size=100)
    assert buf.size == 100 and buf.nbytes == 100 and len(buf) == 100
    assert buf.ptr != 0 and buf.capacity() >= 100


def test_repr_str_and_sizeof_describe_the_device_memory():
    buf = rmm.DeviceBuffer(size=100)
    assert repr(buf) == str(buf) == f"<rmm.DeviceBuffer size=100 ptr={buf.ptr}>"
    # The device memory held, as RMM's DeviceBuffer reports it.
    assert buf.__sizeof__() == 100
    assert rmm.DeviceBuffer(size="1MiB").__sizeof__() == 1 << 20


def test_bytes_and_pickle_carry_the_contents():
    buf = rmm.DeviceBuffer.to_device(b"pickled contents")
    assert bytes(buf) == b"pickled contents"
    copy = pickle.loads(pickle.dumps(buf))
    assert isinstance(copy, rmm.DeviceBuffer) and copy.ptr != buf.ptr
    assert copy.tobytes() == b"pickled contents"


@pytest.mark.parametrize("contents", [b"", b"123", b"out of band"])
def test_pickle_protocol_5_carries_the_contents_out_of_band(contents):
    buf = rmm.DeviceBuffer.to_device(contents)
    buffers = []
    pickled = pickle.dumps(buf, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and isinstance(buffers[0], pickle.PickleBuffer)
    assert bytes(buffers[0]) == contents
    if contents:
        assert contents not in pickled, "the bytes travel beside the pickle"
    assert pickle.loads(pickled, buffers=buffers).tobytes() == contents
    assert pickle.loads(pickle.dumps(buf, protocol=5)).tobytes() == contents, "in band without a callback"
    assert copy_module.deepcopy(buf).tobytes() == contents


def test_prefetch_moves_managed_memory_and_leaves_other_memory_alone():
    managed = rmm.DeviceBuffer.to_device(b"m" * 4096, mr=rmm.mr.ManagedMemoryResource())
    managed.prefetch()
    managed.prefetch(device=-1)  # to the host (cudaCpuDeviceId)
    managed.prefetch(device=0, stream=Stream())
    assert managed.tobytes() == b"m" * 4096
    rmm.DeviceBuffer(size=64).prefetch()  # device memory: nothing to migrate


def test_raw_address_copies():
    src = rmm.DeviceBuffer.to_device(bytes(range(200)))
    dst = rmm.DeviceBuffer(size=200)
    copy_device_to_ptr(src.ptr, dst.ptr, 200)
    host = bytearray(200)
    copy_ptr_to_host(dst.ptr, host)
    assert bytes(host) == bytes(range(200))
    copy_host_to_ptr(b"\xff" * 10, dst.ptr)
    assert dst.tobytes()[:12] == b"\xff" * 10 + bytes([10, 11])
    with pytest.raises(TypeError, match="writable"):
        copy_ptr_to_host(dst.ptr, b"read-only")


def test_a_size_string_is_read_as_bytes():
    assert rmm.DeviceBuffer(size="4KiB").size == 4096


def test_an_empty_buffer_has_no_memory():
    buf = rmm.DeviceBuffer()
    assert buf.size == 0 and buf.ptr == 0
    assert buf.tobytes() == b""


@pytest.mark.parametrize("size, error", [(-1, ValueError), ("12 apples", ValueError), (1.5, TypeError)])
def test_an_impossible_size_is_refused(size, error):
    with pytest.raises(error, match="size"):
        rmm.DeviceBuffer(size=size)


def test_a_decimal_unit_suggests_the_binary_one():
    with pytest.raises(ValueError, match="MiB"):
        rmm.DeviceBuffer(size="512MB")


def test_host_round_trip_through_to_device_and_tobytes():
    data = np.arange(1000, dtype="float64")
    buf = rmm.DeviceBuffer.to_device(data.tobytes())
    assert buf.size == data.nbytes
    np.testing.assert_array_equal(np.frombuffer(buf.tobytes(), dtype="float64"), data)


def test_copy_to_host_makes_an_array_or_fills_one():
    buf = rmm.DeviceBuffer.to_device(bytes(range(256)))
    fresh = buf.copy_to_host()
    assert fresh.dtype == np.uint8 and fresh.tolist() == list(range(256))
    into = np.zeros(300, dtype=np.uint8)
    assert buf.copy_to_host(into) is into
    assert into[:256].tolist() == list(range(256)) and not into[256:].any()


def test_copy_to_host_refuses_a_smaller_or_read_only_array():
    buf = rmm.DeviceBuffer(size=64)
    with pytest.raises(ValueError, match="64"):
        buf.copy_to_host(np.zeros(10, dtype=np.uint8))
    with pytest.raises(TypeError, match="writable"):
        buf.copy_to_host(bytes(64))


def test_copy_from_host_writes_the_start_and_refuses_too_much():
    buf = rmm.DeviceBuffer.to_device(b"\x00" * 8)
    buf.copy_from_host(bytearray(b"abc"))
    assert buf.tobytes() == b"abc" + b"\x00" * 5
    with pytest.raises(ValueError, match="more than the buffer"):
        buf.copy_from_host(b"x" * 9)
    assert buf.tobytes() == b"abc" + b"\x00" * 5  # a refused copy leaves the contents alone


def test_copy_from_device_takes_a_cuda_array():
    source = rmm.DeviceBuffer.to_device(b"device data")
    target = rmm.DeviceBuffer(size=source.size)
    target.copy_from_device(source)
    assert target.tobytes() == b"device data"
    with pytest.raises(TypeError, match="__cuda_array_interface__"):
        target.copy_from_device(b"host")


def test_copy_from_device_checks_what_the_array_claims():
    source = rmm.DeviceBuffer.to_device(bytes(range(16)))

    class Claimed:
        def __init__(self, **changes):
            self.__cuda_array_interface__ = {**source.__cuda_array_interface__, **changes}

    target = rmm.DeviceBuffer(size=16)
    target.copy_from_device(Claimed(typestr="<u2", shape=(8,), stream=2))  # waits for its stream
    assert target.tobytes() == bytes(range(16))
    with pytest.raises(ValueError, match="more than the buffer"):
        target.copy_from_device(Claimed(typestr="<u4", shape=(8,)))
    with pytest.raises(ValueError, match="2\\*\\*64"):
        target.copy_from_device(Claimed(typestr="<u8", shape=(2**62, 4)))
    with pytest.raises(ValueError, match="contiguous"):
        target.copy_from_device(Claimed(strides=(2,)))


def test_a_pointer_and_size_copy_device_memory():
    source = rmm.DeviceBuffer.to_device(b"0123456789")
    made = rmm.DeviceBuffer(ptr=source.ptr + 2, size=5)
    assert made.ptr != source.ptr and made.tobytes() == b"23456"


def test_copy_is_deep():
    buf = rmm.DeviceBuffer.to_device(b"original")
    for duplicate in (buf.copy(), copy.copy(buf), copy.deepcopy(buf)):
        assert duplicate.ptr != buf.ptr and duplicate.tobytes() == b"original"
    duplicate = buf.copy()
    duplicate.copy_from_host(b"changed!")
    assert buf.tobytes() == b"original"


def test_resize_keeps_the_contents():
    buf = rmm.DeviceBuffer.to_device(b"keep")
    buf.resize(1 << 20)
    assert buf.size == 1 << 20 and buf.tobytes()[:4] == b"keep"
    buf.resize(2)
    assert buf.size == 2 and buf.tobytes() == b"ke" and buf.capacity() >= 1 << 20
    buf.reserve(2 << 20)
    assert buf.capacity() >= 2 << 20 and buf.tobytes() == b"ke"


def test_cuda_array_interface_describes_the_bytes():
    buf = rmm.DeviceBuffer(size=48)
    cai = buf.__cuda_array_interface__
    assert cai["data"] == (buf.ptr, False)
    assert cai["shape"] == (48,) and cai["typestr"] == "|u1" and cai["strides"] is None
    assert cai["version"] == 3
    assert cai["stream"] == 1  # the default stream, spelled as the protocol wants


def test_every_stream_form_is_accepted():
    own = Stream()

    class Foreign:
        def __cuda_stream__(self):
            return (0, own.value)

    for stream in (None, DEFAULT_STREAM, PER_THREAD_DEFAULT_STREAM, own, own.value, Foreign()):
        buf = rmm.DeviceBuffer.to_device(b"streamed", stream=stream)
        assert buf.tobytes(stream=stream) == b"streamed"
    assert rmm.DeviceBuffer(size=8, stream=own).stream == own.value
    own.synchronize()


def test_a_wrong_stream_is_a_type_error():
    with pytest.raises(TypeError, match="stream"):
        rmm.DeviceBuffer(size=8, stream="stream 7")

    class BadProtocol:
        def __cuda_stream__(self):
            return 7

    with pytest.raises(TypeError, match="pair"):
        rmm.DeviceBuffer(size=8, stream=BadProtocol())

    class LaterProtocol:  # its second element need not be a handle
        def __cuda_stream__(self):
            return (1, 0x1234)

    with pytest.raises(NotImplementedError, match="protocol version: '1'"):  # as RMM's
        Stream(LaterProtocol())

    class OddProtocol:
        def __cuda_stream__(self):
            return ("zero", 0x1234)

    with pytest.raises(ValueError, match="protocol version 'zero', which is no integer"):
        Stream(OddProtocol())


def test_streams_wrap_foreign_objects_and_compare_by_handle():
    own = Stream()

    class CupyLike:
        ptr = own.value

    class NumbaLike:
        class handle:
            value = own.value

    assert Stream(CupyLike()) == own and Stream(NumbaLike()) == own and Stream(own) == own
    assert own.__cuda_stream__() == (0, own.value)
    assert DEFAULT_STREAM.is_default() and not own.is_default()
    with pytest.raises(TypeError, match="Stream"):
        Stream(3.5)


def test_a_buffer_from_a_resource_is_freed_there(pool):
    stats = rmm.mr.StatisticsResourceAdaptor(pool)
    buf = rmm.DeviceBuffer(size=1000, mr=stats)
    assert stats.allocation_counts["current_count"] == 1
    del buf
    assert stats.allocation_counts["current_count"] == 0


def test_a_cpp_buffer_is_adopted_without_a_copy():
    capsule = rmm._rmm._device_buffer_capsule_for_testing(64, 7)
    buf = rmm.DeviceBuffer.from_capsule(capsule)
    assert buf.size == 64 and buf.tobytes() == bytes([7]) * 64
    with pytest.raises(ValueError, match="adopted"):
        rmm.DeviceBuffer.from_capsule(capsule)
    assert buf.copy().tobytes() == bytes([7]) * 64


def test_an_unadopted_capsule_frees_its_buffer(pool):
    stats = rmm.mr.StatisticsResourceAdaptor(pool)
    rmm.mr.set_current_device_resource(stats)
    capsule = rmm._rmm._device_buffer_capsule_for_testing(4096, 1)
    assert stats.allocation_counts["current_count"] == 1
    del capsule
    assert stats.allocation_counts["current_count"] == 0


def test_streams_rmm_creates_take_flags_and_pools_hand_them_out():
    from rmm._rmm import _stream_flags_for_testing as flags_of
    from rmm.pylibrmm.cuda_stream_pool import CudaStreamPool
    from rmm.pylibrmm.stream import CudaStreamFlags

    assert flags_of(Stream()) == CudaStreamFlags.SYNC_DEFAULT
    assert flags_of(Stream(flags=CudaStreamFlags.NON_BLOCKING)) == CudaStreamFlags.NON_BLOCKING
    with pytest.raises(ValueError, match="flags may only be specified when obj is None"):
        Stream(Stream(), flags=CudaStreamFlags.NON_BLOCKING)
    with pytest.raises(ValueError, match="SYNC_DEFAULT"):
        Stream(flags=7)

    pool = CudaStreamPool(pool_size=3, flags=CudaStreamFlags.NON_BLOCKING)
    assert pool.get_pool_size() == 3
    handed = [pool.get_stream() for _ in range(6)]
    assert len({s.value for s in handed}) == 3 and handed[0] == handed[3]
    assert pool.get_stream(4) == pool.get_stream(1)
    assert flags_of(handed[0]) == CudaStreamFlags.NON_BLOCKING
    kept = pool.get_stream(0)
    del pool, handed  # the stream keeps its pool alive
    assert rmm.DeviceBuffer.to_device(b"on a pool stream", stream=kept).tobytes() == b"on a pool stream"
    with pytest.raises(ValueError, match="at least 1"):
        CudaStreamPool(pool_size=0)


def test_to_device_copies_any_contiguous_buffer_and_refuses_a_strided_one():
    # Typed and two-dimensional arrays are copied byte for byte (RMM's takes bytes only).
    for data in (np.arange(6, dtype=np.uint16), np.ones((2, 2), dtype=np.uint8)):
        assert rmm.DeviceBuffer.to_device(data).tobytes() == data.tobytes()
    with pytest.raises(ValueError, match="must be C-contiguous"):
        rmm.DeviceBuffer.to_device(np.ones(4, dtype=np.uint8)[::2])
    with pytest.raises(TypeError, match="must be a buffer"):
        rmm.DeviceBuffer.to_device("abc")
    with pytest.raises(TypeError, match="must be a buffer"):
        rmm.DeviceBuffer.to_device(123)
