# SPDX-License-Identifier: Apache-2.0
"""Pausing a PyTorch training process from outside it, and the time a pause takes by size.

usage:
  torch_pause.py scenario [GIB]   the whole scenario, run without the shim (it starts the others):
                                  a trainer holding GIB (default 20) under rmm-run is paused with
                                  rmm-ctl, a second program uses 100 GiB meanwhile (the device's
                                  memory less 4 GiB where it has less), the trainer is
                                  resumed and checks its tensors, its CUDA graph and its losses
                                  against a trainer never paused
  torch_pause.py sizes            under rmm-run: pause and resume in process (rmm_shim_pause) by
                                  size, with the contents kept and discarded
  torch_pause.py fault            run without the shim (it starts the next under rmm-run): a kernel
                                  that touches paused memory is reported as such, while paused and
                                  by the resume
  torch_pause.py touch            the program that does (started by fault)
  torch_pause.py trainer GIB      one trainer (started by the scenario)
  torch_pause.py hog GIB          a program that fills GIB of device memory and frees it (likewise)

The tools are taken from RMM_RUN and RMM_CTL (default: build-gpu/tools). Prints one
`RESULT {...}` line per scenario or size table; exits 1 when a check fails."""
import ctypes
import json
import os
import subprocess
import sys
import time

import harness

GIB = 1 << 30
WIDTH = 8192  # a layer of WIDTH x WIDTH fp32 weights is 256 MiB; with its gradient and AdamW's two
BATCH = 256   # states it holds 1 GiB, so a trainer of N GiB has N layers
HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "build-gpu", "tools")


def fail(message):
    print(f"FAILED: {message}", flush=True)
    sys.exit(1)


def shim():
    """The shim's control functions, reached through ctypes as a program would."""
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "rmm_shim_pause"):
        fail("the shim is not loaded: run this role under rmm-run")
    lib.rmm_shim_last_message.restype = ctypes.c_char_p
    lib.rmm_shim_release.restype = ctypes.c_size_t
    return lib


def nvml_device():
    """NVML's handle of device 0, or None where there is no NVML."""
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:  # no NVML here: no figure, the result says None
        return None, None


def process_mib(pid):
    """The device memory NVML counts for process `pid` (None where NVML does not list it, as in a
    container with its own process ids), and the device's used memory, in MiB."""
    pynvml, handle = nvml_device()
    if pynvml is None:
        return None, None
    used = pynvml.nvmlDeviceGetMemoryInfo(handle).used >> 20
    for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
        if p.pid == pid and p.usedGpuMemory is not None:
            return p.usedGpuMemory >> 20, used
    return None, used


def checksums(tensors):
    """Exact: the sum of each tensor's bits read as 32-bit integers."""
    return [int(t.detach().view(-1).view(torch.int32).sum(dtype=torch.int64)) for t in tensors]


def trainer(gib):
    """Trains N layers (N GiB with gradients and AdamW's states) for three steps, captures a CUDA
    graph over three of its tensors, then reports READY and waits for a line on stdin (the
    scenario pauses and resumes it meanwhile). Then it checks every tensor and the graph and trains
    three steps more. The same seed and data every run, so that the losses compare exactly."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    lib = shim()
    # What the process holds with its context and kernels loaded but nothing allocated: one small
    # step of the same shapes, then everything freed and given back.
    warm = torch.nn.Linear(WIDTH, WIDTH, bias=False, device="cuda")
    warm(torch.ones(BATCH, WIDTH, device="cuda")).sum().backward()
    torch.optim.AdamW(warm.parameters()).step()
    del warm
    torch.cuda.synchronize()
    lib.rmm_shim_release()
    context_mib, _ = process_mib(os.getpid())

    model = torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH, bias=False, device="cuda") for _ in range(gib)])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    data = torch.randn(BATCH, WIDTH, device="cuda")
    target = torch.randn(BATCH, WIDTH, device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(data), target)
        loss.backward()
        optimizer.step()
        return float(loss)

    losses = [step() for _ in range(3)]
    # A graph over tensors served by the shim: its kernels keep their addresses across the pause.
    a = torch.randn(16 << 20, device="cuda")
    b = torch.randn(16 << 20, device="cuda")
    c = torch.empty_like(a)
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        c.copy_(a).mul_(2).add_(b)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        c.copy_(a).mul_(2).add_(b)
    graph.replay()
    torch.cuda.synchronize()
    expected = checksums([c])
    c.zero_()
    tensors = list(model.parameters()) + [p.grad for p in model.parameters()]
    tensors += [s for state in optimizer.state.values() for s in state.values() if torch.is_tensor(s) and s.is_cuda]
    tensors += [data, target, a, b]
    before = checksums(tensors)
    torch.cuda.synchronize()
    held_mib, _ = process_mib(os.getpid())
    print(f"READY {os.getpid()} context_mib={context_mib} held_mib={held_mib}", flush=True)
    sys.stdin.readline()  # the scenario's go-ahead: paused and resumed, or not

    after = checksums(tensors)
    graph.replay()
    torch.cuda.synchronize()
    replayed = checksums([c])
    losses += [step() for _ in range(3)]
    print("RESULT " + json.dumps({
        "role": "trainer", "tensors": len(tensors), "tensors_changed": sum(x != y for x, y in zip(before, after)),
        "graph_replays_same": replayed == expected, "losses": losses, "context_mib": context_mib,
        "held_mib": held_mib}), flush=True)


def hog(gib):
    """Fills GIB of device memory, checks it, reports; then on a line `grab` takes what is left but
    for 1 GiB and reports again; ends (freeing everything) on a line `free` or at end of input."""
    t = torch.empty(gib * GIB, dtype=torch.uint8, device="cuda")
    t.fill_(7)
    ok = int(t.min()) == 7 and int(t.max()) == 7  # a sum would make a copy of eight times its size
    print(f"HOG filled {gib} GiB ok={ok}", flush=True)
    grabbed = []
    for line in sys.stdin:
        if line.strip() == "grab":
            free, _ = torch.cuda.mem_get_info()
            grabbed.append(torch.empty(max(free - GIB, 0), dtype=torch.uint8, device="cuda"))
            print(f"HOG grabbed {grabbed[-1].numel() >> 20} MiB", flush=True)
        else:
            break
    del t, grabbed
    torch.cuda.synchronize()
    print("HOG freed", flush=True)


def ctl(*args):
    """Runs rmm-ctl; returns its exit status, its output and the seconds it took."""
    start = time.perf_counter()
    done = subprocess.run([os.environ.get("RMM_CTL", os.path.join(TOOLS, "rmm-ctl")), *args],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    print(f"$ rmm-ctl {' '.join(args)}  ({seconds:.3f} s, exit {done.returncode})\n{done.stdout}{done.stderr}",
          end="", flush=True)
    return done.returncode, done.stdout + done.stderr, seconds


def start_under_shim(script, args, env, who):
    """Starts `script` with `args` under rmm-run; returns it once it printed `READY PID KEY=VALUE...`,
    with its pid and those values. It waits on its stdin to go on (finish_child)."""
    rmm_run = os.environ.get("RMM_RUN", os.path.join(TOOLS, "rmm-run"))
    p = subprocess.Popen([rmm_run, "--", sys.executable, script, *args], env=dict(env, PYTHONUNBUFFERED="1"),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        print(f"  {who}: " + line, end="", flush=True)
        if line.startswith("READY"):
            fields = line.split()
            return p, int(fields[1]), dict(f.split("=") for f in fields[2:])
    fail(f"the {who} ended before it was ready (exit {p.wait()})")


def finish_child(p, who):
    """Lets a child started by start_under_shim go on; returns its `RESULT {...}`."""
    p.stdin.write("go\n")
    p.stdin.flush()
    result = None
    for line in p.stdout:
        print(f"  {who}: " + line, end="", flush=True)
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    if p.wait() != 0 or result is None:
        fail(f"the {who} failed (exit {p.returncode})")
    return result


def start_trainer(gib):
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    return start_under_shim(__file__, ["trainer", str(gib)], env, "trainer")


def finish_trainer(p):
    return finish_child(p, "trainer")


def hog_line(hog_process, command=None):
    if command:
        hog_process.stdin.write(command + "\n")
        hog_process.stdin.flush()
    line = hog_process.stdout.readline()
    print("  second program: " + line, end="", flush=True)
    return line


def scenario(gib):
    checks = {}
    reference, _, _ = start_trainer(gib)
    unpaused = finish_trainer(reference)

    trainer_process, pid, figures = start_trainer(gib)
    held, used_before = process_mib(pid)
    status, message, pause_s = ctl(str(pid), "pause")
    checks["pause succeeds"] = status == 0
    paused, used_paused = process_mib(pid)
    status, listing, _ = ctl("list")
    checks["listed as paused"] = f"{pid}" in listing and "paused" in listing

    # 100 GiB where the device has room for it beside the paused trainer (an H200), else what it has
    # but 4 GiB; either way more than would fit beside the trainer running.
    pynvml, handle = nvml_device()
    total_mib = pynvml.nvmlDeviceGetMemoryInfo(handle).total >> 20 if pynvml else 0
    hog_gib = min(100, (total_mib - used_paused) // 1024 - 4) if pynvml else 100
    checks["the second program would not fit beside the running trainer"] = hog_gib * 1024 > total_mib - used_before
    second = subprocess.Popen([sys.executable, __file__, "hog", str(hog_gib)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    checks[f"second program uses {hog_gib} GiB"] = "ok=True" in hog_line(second)
    hog_line(second, "grab")  # now the device has too little for the trainer's memory
    status, refused, _ = ctl(str(pid), "resume")
    checks["resume refused while the memory is taken"] = status != 0 and "missing" in refused
    hog_line(second, "free")
    checks["second program ends"] = second.wait() == 0
    status, message, resume_s = ctl(str(pid), "resume")
    checks["resume succeeds"] = status == 0
    resumed, _ = process_mib(pid)
    result = finish_trainer(trainer_process)
    checks["every tensor as before the pause"] = result["tensors_changed"] == 0
    checks["the graph replays"] = result["graph_replays_same"]
    checks["losses as never paused"] = result["losses"] == unpaused["losses"]
    checks["process memory falls to its context"] = paused is None or paused <= int(figures["context_mib"]) + 64
    print("RESULT " + json.dumps({
        "role": "scenario", "gib": gib, "second_program_gib": hog_gib, "device_total_mib": total_mib, "pause_s": pause_s, "resume_s": resume_s, "tensors": result["tensors"],
        "context_mib": figures["context_mib"], "process_mib": {"held": held, "paused": paused, "resumed": resumed},
        "device_used_mib": {"held": used_before, "paused": used_paused}, "losses": result["losses"],
        "checks": checks}), flush=True)
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        fail(", ".join(failed))


def touch():
    """The program's mistake: a kernel on paused memory. Its context fails for good; the shim says so."""
    lib = shim()
    t = torch.ones(1 << 20, device="cuda")
    torch.cuda.synchronize()
    if lib.rmm_shim_pause(0) != 0:
        fail(lib.rmm_shim_last_message().decode())
    try:
        t.add_(1)
        torch.cuda.synchronize()
        saw = "nothing"
    except RuntimeError as e:
        saw = str(e).strip().splitlines()[0]
    time.sleep(0.5)  # the shim's watch asks every 100 ms
    print("before_resume", flush=True)
    resumed = lib.rmm_shim_resume()
    print("RESULT " + json.dumps({"role": "touch", "program_saw": saw, "resume": resumed,
                                  "resume_message": lib.rmm_shim_last_message().decode()}), flush=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the failed context cannot be used again, not even by PyTorch's teardown


def fault():
    rmm_run = os.environ.get("RMM_RUN", os.path.join(TOOLS, "rmm-run"))
    done = subprocess.run([rmm_run, "--", sys.executable, __file__, "touch"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1"))
    print(done.stdout + done.stderr, flush=True)
    results = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not results:
        fail(f"the program that touches paused memory ended with {done.returncode} and no result")
    result = results[0]
    said = "failed while the process's device memory was paused" in done.stderr
    checks = {
        "the program saw an illegal memory access": "illegal memory access" in result["program_saw"],
        "the shim said on stderr that a kernel touched paused memory": said,
        "the resume refused, saying why": result["resume"] != 0 and "touched paused memory" in result["resume_message"],
    }
    print("RESULT " + json.dumps({"role": "fault", "checks": checks}), flush=True)
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        fail(", ".join(failed))


def sizes():
    """Pause plus resume in process, by size: the contents kept (and checked), then discarded."""
    lib = shim()
    rows = []
    for gib in (1, 4, 8, 16, 20):
        t = torch.empty(gib * GIB // 4, dtype=torch.int32, device="cuda")
        t.copy_(torch.arange(t.numel(), dtype=torch.int32, device="cuda"))
        expected = int(t.sum(dtype=torch.int64))
        torch.cuda.synchronize()
        row = {"gib": gib}
        for way, flags in (("kept", 0), ("kept_again", 0), ("discard", 1)):
            start = time.perf_counter()
            if lib.rmm_shim_pause(flags) != 0:
                fail(lib.rmm_shim_last_message().decode())
            paused = time.perf_counter()
            if lib.rmm_shim_resume() != 0:
                fail(lib.rmm_shim_last_message().decode())
            row[way] = {"pause_s": paused - start, "resume_s": time.perf_counter() - paused}
            if flags == 0 and int(t.sum(dtype=torch.int64)) != expected:
                fail(f"{gib} GiB: the contents changed across a pause")
        print(f"{gib:3d} GiB: " + "  ".join(f"{w} {r['pause_s']:.3f} + {r['resume_s']:.3f} s"
                                          for w, r in row.items() if w != "gib"), flush=True)
        rows.append(row)
        del t
        torch.cuda.synchronize()
        lib.rmm_shim_release()
    print("RESULT " + json.dumps({"role": "sizes", "rows": rows}), flush=True)


if __name__ == "__main__":
    role = sys.argv[1] if len(sys.argv) > 1 else ""
    if role not in ("scenario", "sizes", "fault", "touch", "trainer", "hog"):
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    harness.require("torch_pause", "torch")
    import torch  # noqa: E402 (after the check: without PyTorch or a GPU the run is skipped)
    arg = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    {"scenario": lambda: scenario(arg), "sizes": sizes, "fault": fault, "touch": touch, "trainer": lambda: trainer(arg),
     "hog": lambda: hog(arg)}[role]()
