"""A CUDA tensor handed to a child process with torch.multiprocessing, changed there in place,
and checked in the parent: PyTorch exports the segment its allocator got from cudaMalloc with
cudaIpcGetMemHandle and sends the tensor's offset in it. Prints `ipc=ok` when the parent sees
the child's writes, and the values otherwise."""

import sys

import torch
import torch.multiprocessing as mp


def child(queue, done):
    tensor = queue.get()
    tensor.add_(1.0)  # in place: the parent's memory
    torch.cuda.synchronize()
    del tensor
    done.set()


def main():
    mp.set_start_method("spawn")
    queue = mp.Queue()
    done = mp.Event()
    # A tensor that is not the first in its segment: the offset matters.
    before = torch.full((1000,), 7.0, device="cuda")
    tensor = torch.arange(4096, dtype=torch.float32, device="cuda")
    process = mp.Process(target=child, args=(queue, done))
    process.start()
    queue.put(tensor)
    done.wait(120)
    process.join(120)
    expected = torch.arange(4096, dtype=torch.float32, device="cuda") + 1.0
    ok = process.exitcode == 0 and torch.equal(tensor, expected) and bool((before == 7.0).all())
    print("ipc=" + ("ok" if ok else f"bad exitcode={process.exitcode} first={tensor[:4].tolist()}"))
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
