# SPDX-License-Identifier: Apache-2.0
"""Many Python threads allocating at once: no two live buffers overlap, nothing is lost."""

import threading

import rmm
from rmm import mr


def test_eight_threads_allocate_and_check_their_data():
    stats = mr.StatisticsResourceAdaptor(mr.PoolMemoryResource(mr.CudaMemoryResource(), "16MiB"))
    mr.set_current_device_resource(stats)
    errors = []
    start = threading.Barrier(8)

    def work(thread):
        try:
            start.wait()
            live = []
            for step in range(300):
                pattern = bytes([thread * 16 + step % 16]) * (512 + 64 * thread + step)
                live.append((pattern, rmm.DeviceBuffer.to_device(pattern)))
                if len(live) > 20:
                    expected, buf = live.pop(0)
                    assert buf.tobytes() == expected
            for expected, buf in live:
                assert buf.tobytes() == expected
        except Exception as error:  # reported to the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    counts = stats.allocation_counts
    assert counts["total_count"] == 8 * 300 and counts["current_count"] == 0
