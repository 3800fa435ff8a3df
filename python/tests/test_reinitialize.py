# SPDX-License-Identifier: Apache-2.0
"""rmm.reinitialize in all its forms, and from a TOML configuration."""

import pytest

import rmm
from rmm import mr

needs_two_devices = pytest.mark.skipif(
    rmm._rmm.get_num_devices() < 2, reason="needs two devices (the emulator has RMM_EMU_DEVICE_COUNT=2)"
)


def test_the_default_is_a_cuda_resource():
    rmm.reinitialize()
    assert type(mr.get_current_device_resource()) is mr.CudaMemoryResource
    assert rmm.is_initialized()


def test_a_pool_of_the_given_sizes():
    rmm.reinitialize(pool_allocator=True, initial_pool_size="32MiB", maximum_pool_size=1 << 30)
    pool = mr.get_current_device_resource()
    assert isinstance(pool, mr.PoolMemoryResource)
    assert pool.pool_size() == 32 << 20
    assert type(pool.upstream_mr) is mr.CudaMemoryResource
    rmm.DeviceBuffer(size=64 << 20)  # grows past the initial size
    assert pool.pool_size() >= 64 << 20


def test_a_managed_pool():
    rmm.reinitialize(pool_allocator=True, managed_memory=True, initial_pool_size="8MiB")
    pool = mr.get_current_device_resource()
    assert type(pool.upstream_mr) is mr.ManagedMemoryResource
    assert rmm.DeviceBuffer.to_device(b"managed").tobytes() == b"managed"


def test_managed_memory_without_a_pool():
    rmm.reinitialize(managed_memory=True)
    assert type(mr.get_current_device_resource()) is mr.ManagedMemoryResource


def test_logging_writes_one_file_per_device(tmp_path):
    rmm.reinitialize(logging=True, log_file_name=str(tmp_path / "rmm_log.csv"))
    logger = mr.get_current_device_resource()
    assert isinstance(logger, mr.LoggingResourceAdaptor)
    assert logger.get_file_name() == str(tmp_path / "rmm_log.dev0.csv")
    assert mr.get_log_filenames() == {0: str(tmp_path / "rmm_log.dev0.csv")}
    rmm.DeviceBuffer(size=1234)
    logger.flush()
    lines = (tmp_path / "rmm_log.dev0.csv").read_text().splitlines()
    assert lines[0].startswith("Thread,Time,Action,Pointer,Size,Stream")
    assert any(",allocate," in line and ",1234," in line for line in lines[1:])


def test_logging_takes_its_file_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RMM_LOG_FILE", str(tmp_path / "env.csv"))
    rmm.reinitialize(logging=True)
    assert mr.get_current_device_resource().get_file_name() == str(tmp_path / "env.dev0.csv")


def test_logging_without_a_file_says_how_to_name_one(monkeypatch):
    monkeypatch.delenv("RMM_LOG_FILE", raising=False)
    with pytest.raises(ValueError, match="RMM_LOG_FILE"):
        rmm.reinitialize(logging=True)


def test_enable_and_disable_logging(tmp_path):
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), 1 << 20)
    mr.set_current_device_resource(pool)
    mr.enable_logging(str(tmp_path / "on.csv"))
    assert isinstance(mr.get_current_device_resource(), mr.LoggingResourceAdaptor)
    mr.disable_logging()
    assert mr.get_current_device_resource() is pool


@needs_two_devices
def test_several_devices_each_get_their_own_stack():
    rmm.reinitialize(pool_allocator=True, initial_pool_size="4MiB", devices=[0, 1])
    first, second = mr.get_per_device_resource(0), mr.get_per_device_resource(1)
    assert isinstance(first, mr.PoolMemoryResource) and isinstance(second, mr.PoolMemoryResource)
    assert first is not second
    assert rmm._rmm.get_current_device() == 0  # building on device 1 restored the current device
    mr.set_per_device_resource(1, mr.CudaMemoryResource())


def test_a_bad_device_changes_nothing():
    before = mr.get_current_device_resource()
    with pytest.raises(ValueError, match="device 7 does not exist"):
        rmm.reinitialize(pool_allocator=True, initial_pool_size="4MiB", devices=[0, 7])
    assert mr.get_current_device_resource() is before


def test_sizes_without_a_pool_are_refused():
    with pytest.raises(ValueError, match="pool_allocator"):
        rmm.reinitialize(initial_pool_size="1GiB")


def test_sizes_are_checked_before_anything_changes_with_rmms_words():
    before = mr.get_current_device_resource()
    with pytest.raises(RuntimeError, match="Initial pool size exceeds the maximum pool size: 2.00 KiB > 1.00 KiB"):
        rmm.reinitialize(pool_allocator=True, initial_pool_size=1 << 11, maximum_pool_size=1 << 10)
    with pytest.raises(ValueError, match="Could not parse initial_pool_size '2k' as a byte size: .*ambiguous"):
        rmm.reinitialize(pool_allocator=True, initial_pool_size="2k", maximum_pool_size="8KiB")
    assert mr.get_current_device_resource() is before


def test_a_configuration_file_builds_the_stack(tmp_path):
    config = tmp_path / "stack.toml"
    config.write_text(
        '[[resource]]\ntype = "statistics"\n\n[[resource]]\ntype = "pool"\ninitial_size = "16MiB"\n\n'
        '[[resource]]\ntype = "cuda"\n'
    )
    rmm.reinitialize(config_file=config)
    assert rmm.DeviceBuffer.to_device(b"from a file").tobytes() == b"from a file"


def test_environment_overrides_apply_to_a_configuration(tmp_path, monkeypatch):
    config = tmp_path / "pool.toml"
    config.write_text('[[resource]]\ntype = "pool"\ninitial_size = "16MiB"\n\n[[resource]]\ntype = "cuda"\n')
    monkeypatch.setenv("RMM_POOL_INITIAL_SIZE", "not a size")
    with pytest.raises(ValueError, match="RMM_POOL_INITIAL_SIZE"):
        rmm.reinitialize(config_file=config)


def test_a_configuration_excludes_the_other_options(tmp_path):
    with pytest.raises(ValueError, match="pool_allocator"):
        rmm.reinitialize(pool_allocator=True, config_file=tmp_path / "any.toml")


def test_a_missing_configuration_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="missing.toml"):
        rmm.reinitialize(config_file=tmp_path / "missing.toml")


def test_reinitialize_hooks_run_last_registered_first_with_their_arguments():
    calls = []

    def hook(name, *, times=1):
        calls.append((name, times))

    rmm.register_reinitialize_hook(hook, "first")
    rmm.register_reinitialize_hook(hook, "second", times=2)
    try:
        rmm.reinitialize()
        assert calls == [("second", 2), ("first", 1)]
        calls.clear()
        with pytest.raises(ValueError):
            rmm.reinitialize(devices=[])  # refused before any hook runs
        assert calls == []
    finally:
        rmm.unregister_reinitialize_hook(hook)
    rmm.reinitialize()
    assert calls == [], "unregistering removes every registration of the function"


def test_version_and_commit():
    assert rmm.__version__ == "0.1.0"
    assert isinstance(rmm.__git_commit__, str)
    assert rmm.__git_commit__ == "" or len(rmm.__git_commit__) == 40
