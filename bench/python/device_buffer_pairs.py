# SPDX-License-Identifier: Apache-2.0
"""Cost of one allocate-and-free pair from Python: rmm.DeviceBuffer over a pool against CuPy's
cupy.empty over CuPy's own pool, measured in the same process (median of repetitions).

usage: python3 bench/python/device_buffer_pairs.py [--pairs N] [--repetitions R]
       (PYTHONPATH must reach the rmm package, for example <build>/python)
"""

import argparse
import statistics
import time

import rmm

SIZES = [256, 64 << 10, 1 << 20, 16 << 20]


def time_pairs(make, pairs: int) -> float:
    """Nanoseconds per pair over `pairs` calls of `make` (each result is dropped at once: one
    allocation and one free)."""
    start = time.perf_counter_ns()
    for _ in range(pairs):
        make()
    return (time.perf_counter_ns() - start) / pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--repetitions", type=int, default=7)
    args = parser.parse_args()

    rmm.mr.set_current_device_resource(rmm.mr.PoolMemoryResource(rmm.mr.CudaMemoryResource(), "256MiB"))
    try:
        import cupy
    except ImportError:
        cupy = None

    makers = {}
    for size in SIZES:
        makers[("rmm", size)] = lambda size=size: rmm.DeviceBuffer(size=size)
        if cupy is not None:
            makers[("cupy", size)] = lambda size=size: cupy.empty(size, dtype=cupy.uint8)
    # Warm-up, then repetitions that interleave every case, so that none runs only while the
    # machine is still warming up.
    for make in makers.values():
        time_pairs(make, args.pairs // 10)
    samples = {key: [] for key in makers}
    for _ in range(args.repetitions):
        for key, make in makers.items():
            samples[key].append(time_pairs(make, args.pairs))
    median = {key: statistics.median(values) for key, values in samples.items()}

    print(f"{'bytes':>10} {'rmm.DeviceBuffer ns':>20} {'cupy.empty ns':>14} {'rmm / cupy':>11}")
    for size in SIZES:
        ours = median[("rmm", size)]
        if cupy is None:
            print(f"{size:>10} {ours:>20.0f} {'-':>14} {'-':>11}")
            continue
        theirs = median[("cupy", size)]
        print(f"{size:>10} {ours:>20.0f} {theirs:>14.0f} {ours / theirs:>11.2f}")


if __name__ == "__main__":
    main()
