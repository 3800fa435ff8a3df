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


def per_pair_ns(make, pairs: int, repetitions: int) -> float:
    for _ in range(pairs // 10):  # warm-up: the pool has grown, the code paths are hot
        make()
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        for _ in range(pairs):
            make()  # the object is dropped at once: one allocation and one free
        samples.append((time.perf_counter_ns() - start) / pairs)
    return statistics.median(samples)


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

    print(f"{'bytes':>10} {'rmm.DeviceBuffer ns':>20} {'cupy.empty ns':>14} {'rmm / cupy':>11}")
    for size in SIZES:
        ours = per_pair_ns(lambda: rmm.DeviceBuffer(size=size), args.pairs, args.repetitions)
        if cupy is None:
            print(f"{size:>10} {ours:>20.0f} {'-':>14} {'-':>11}")
            continue
        theirs = per_pair_ns(lambda: cupy.empty(size, dtype=cupy.uint8), args.pairs, args.repetitions)
        print(f"{size:>10} {ours:>20.0f} {theirs:>14.0f} {ours / theirs:>11.2f}")


if __name__ == "__main__":
    main()
