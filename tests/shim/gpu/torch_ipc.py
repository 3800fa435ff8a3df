# SPDX-License-Identifier: Apache-2.0
"""A CUDA tensor handed to a child process with torch.multiprocessing, changed there in place,
and checked in the parent: PyTorch exports the segment its caching allocator got from cudaMalloc
with cudaIpcGetMemHandle and sends the tensor's offset in it. Prints `ipc=ok` when the parent sees
the child's writes, `ipc=failed ...` otherwise; the child never waits for more than a minute."""

import queue as queues
import sys

import torch
import torch.multiprocessing as mp


def child(tensors, done):
    try:
        tensor = tensors.get(timeout=60)
        tensor.add_(1.0)  # in place: the parent's memory
        torch.cuda.synchronize()
        del tensor
        done.put("ok")
    except Exception as error:  # the parent prints it
        done.put(f"child: {type(error).__name__}: {error}")


def main():
    mp.set_start_method("spawn")
    tensors = mp.Queue()
    done = mp.Queue()
    # A tensor that is not the first in its segment: the offset matters.
    before = torch.full((1000,), 7.0, device="cuda")
    tensor = torch.arange(4096, dtype=torch.float32, device="cuda")
    process = mp.Process(target=child, args=(tensors, done))
    process.start()
    try:
        tensors.put(tensor)
        outcome = done.get(timeout=120)
    except (queues.Empty, RuntimeError) as error:
        outcome = f"parent: {type(error).__name__}: {error}"
    process.join(30)
    if process.is_alive():
        process.kill()
    expected = torch.arange(4096, dtype=torch.float32, device="cuda") + 1.0
    ok = outcome == "ok" and torch.equal(tensor, expected) and bool((before == 7.0).all())
    print("ipc=" + ("ok" if ok else f"failed ({outcome}; first values {tensor[:4].tolist()})"))
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
