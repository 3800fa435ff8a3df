# SPDX-License-Identifier: Apache-2.0
"""The debug logger's level, and allocation logs that rmm-replay reads."""

import os
import subprocess

import pytest

import rmm
from rmm import mr


def test_logging_level_round_trips():
    previous = rmm.get_logging_level()
    try:
        for level in (rmm.level_enum.trace, rmm.level_enum.error, rmm.level_enum.off):
            rmm.set_logging_level(level)
            assert rmm.get_logging_level() == level
        rmm.set_logging_level(rmm.level_enum.warn)
        assert rmm.should_log(rmm.level_enum.error) and not rmm.should_log(rmm.level_enum.info)
    finally:
        rmm.set_logging_level(previous)


def test_a_level_may_be_named_as_the_seeds_do_and_nothing_else_is_taken():
    previous = rmm.get_logging_level()
    try:
        rmm.set_logging_level("trace")
        assert rmm.get_logging_level() == rmm.level_enum.trace
        rmm.set_logging_level("warn")
        assert rmm.get_logging_level() == rmm.level_enum.warn
        assert rmm.should_log("error") and not rmm.should_log("info")
        # As RMM: anything but the enum is a TypeError; the seeds' lower-case names are kept.
        for bad in ("INFO", "loud", 3, None):
            with pytest.raises(TypeError, match="set_logging_level: "):
                rmm.set_logging_level(bad)
        with pytest.raises(TypeError, match="'WARN' is not a level: pass an rmm.level_enum, or one of trace, debug"):
            rmm.set_flush_level("WARN")
        assert rmm.get_logging_level() == rmm.level_enum.warn, "a bad level changes nothing"
    finally:
        rmm.set_logging_level(previous)


def test_a_log_written_from_python_replays(tmp_path):
    replay = os.environ.get("RMM_REPLAY")
    if not replay:
        pytest.fail("RMM_REPLAY must name the rmm-replay binary (the test suite sets it)")
    pool = mr.PoolMemoryResource(mr.CudaMemoryResource(), "8MiB")
    logger = mr.LoggingResourceAdaptor(pool, str(tmp_path / "python.csv"))
    buffers = [rmm.DeviceBuffer(size=(i + 1) * 4096, mr=logger) for i in range(50)]
    del buffers[::2]
    del buffers
    logger.flush()
    result = subprocess.run(
        [replay, logger.get_file_name(), "--resource", "pool"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("python.dev0.csv"))
    peak_live = 4096 * sum(range(1, 51))  # every buffer was alive at once
    assert rmm.format_bytes(peak_live) in row, row
    assert row.split()[-1] == "0/0", row  # no failed allocations in the log or the replay


def test_the_flush_level_and_a_flush():
    previous = rmm.get_flush_level()
    try:
        rmm.set_flush_level("info")
        assert rmm.get_flush_level() == rmm.level_enum.info
        rmm.set_flush_level(rmm.level_enum.error)
        assert rmm.get_flush_level() == rmm.level_enum.error
        rmm.flush_logger()
    finally:
        rmm.set_flush_level(previous)


def test_logging_names_are_at_the_top_as_in_rmm():
    assert rmm.enable_logging is mr.enable_logging
    assert rmm.disable_logging is mr.disable_logging
    assert rmm.get_log_filenames is mr.get_log_filenames


def test_flush_logs_writes_out_every_logging_adaptor(tmp_path):
    from rmm.pylibrmm.memory_resource._memory_resource import LoggingResourceAdaptor, _flush_logs

    assert LoggingResourceAdaptor is mr.LoggingResourceAdaptor
    log = tmp_path / "flushed.csv"
    mr.set_current_device_resource(mr.LoggingResourceAdaptor(mr.CudaMemoryResource(), str(log)))
    buf = rmm.DeviceBuffer(size=4096)
    _flush_logs()
    files = list(tmp_path.iterdir())
    assert len(files) == 1, files  # one file per device: flushed.dev0.csv
    rows = files[0].read_text().splitlines()
    assert rows[0].startswith("Thread,Time,Action,Pointer,Size,Stream")
    assert any(",allocate," in row and ",4096," in row for row in rows[1:]), rows
    del buf
