# SPDX-License-Identifier: Apache-2.0
"""rmm.shim's control of a process under the shim: regions, pause and resume by tag, the report
and the state, and the errors outside the shim. The controlled program runs as a child process with
the shim preloaded, allocating through the CUDA driver with ctypes (on the emulator without a GPU)."""

import os
import subprocess
import sys
import textwrap

import pytest

import rmm.shim

CARRIES_TOOLS = os.path.isdir(os.path.join(os.path.dirname(rmm.shim.__file__), "lib"))
SHIM = os.environ.get("RMM_TEST_SHIM_LIBRARY") or (rmm.shim.library_path() if CARRIES_TOOLS else None)

# Allocates through the driver's cuMemAlloc, which the shim serves, and checks contents with copies.
CHILD_PRELUDE = textwrap.dedent(
    """
    import ctypes, json, sys, threading, time
    import rmm.shim as shim
    cuda = ctypes.CDLL("libcuda.so.1")
    def check(result, what):
        assert result == 0, f"{what} returned {result}"
    check(cuda.cuInit(0), "cuInit")
    context = ctypes.c_void_p()
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), 0), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    def alloc(size, fill):
        ptr = ctypes.c_uint64()
        check(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(size)), "cuMemAlloc")
        check(cuda.cuMemsetD8_v2(ptr, ctypes.c_ubyte(fill), ctypes.c_size_t(size)), "cuMemsetD8")
        return ptr.value
    def holds(ptr, size, fill):
        host = (ctypes.c_ubyte * size)()
        check(cuda.cuMemcpyDtoH_v2(host, ctypes.c_uint64(ptr), ctypes.c_size_t(size)), "cuMemcpyDtoH")
        return all(b == fill for b in host)
    def free(ptr):
        check(cuda.cuMemFree_v2(ctypes.c_uint64(ptr)), "cuMemFree")
    MiB = 1 << 20
    """
)


def run_child(body: str, shim: bool = True) -> subprocess.CompletedProcess:
    env = rmm.shim.environment({**os.environ, "LD_PRELOAD": ""}) if shim and CARRIES_TOOLS else dict(os.environ)
    if shim and not CARRIES_TOOLS:
        env["LD_PRELOAD"] = SHIM
    env["RMM_SHIM_CONTROL"] = "false"  # no control socket: nothing outside the child talks to it
    return subprocess.run(
        [sys.executable, "-c", CHILD_PRELUDE + textwrap.dedent(body)], env=env, capture_output=True, text=True, timeout=120
    )


needs_shim = pytest.mark.skipif(
    SHIM is None, reason="no shim to preload: the CTest run names the build's (RMM_TEST_SHIM_LIBRARY), the wheel carries one"
)


def test_outside_the_shim_every_control_function_says_so():
    assert not rmm.shim.available()
    for call in (rmm.shim.pause, rmm.shim.resume, rmm.shim.release, rmm.shim.report, rmm.shim.state):
        with pytest.raises(rmm.shim.NotUnderShimError, match="does not run under the rmm shim: start it with rmm-run"):
            call()
    with pytest.raises(rmm.shim.NotUnderShimError):
        with rmm.shim.region("weights"):
            pass


@needs_shim
def test_a_tag_pauses_alone_and_resumes_with_its_contents():
    result = run_child(
        """
        assert shim.available()
        with shim.region("weights"):
            assert shim.current_tag() == "weights"
            weights = alloc(8 * MiB, 0x5A)
        with shim.region("kv_cache", keep=False):
            kv = alloc(16 * MiB, 0x33)
        assert shim.current_tag() is None
        untagged = alloc(4 * MiB, 0x77)
        print("pause", shim.pause("kv_cache"))
        state = shim.state()
        print("state", json.dumps(state, sort_keys=True))
        assert state["tags"]["kv_cache"]["paused"] and state["tags"]["kv_cache"]["mapped_bytes"] == 0
        assert not state["tags"]["weights"]["paused"] and state["tags"]["weights"]["mapped_bytes"] > 0
        assert holds(untagged, 4 * MiB, 0x77), "untagged memory runs on"
        try:
            shim.pause("kv_cache")
        except shim.ShimError as e:
            print("again", e)
        try:
            shim.pause("nope")
        except shim.ShimError as e:
            print("unknown", e)
        print("resume", shim.resume("kv_cache"))
        print("keep", shim.pause("weights", discard=False))
        assert shim.state()["tags"]["weights"]["host_bytes"] >= 8 * MiB
        shim.resume("weights")
        assert holds(weights, 8 * MiB, 0x5A), "kept contents come back"
        print("whole", shim.pause())
        assert shim.state()["paused"]
        shim.resume()
        assert holds(weights, 8 * MiB, 0x5A) and holds(untagged, 4 * MiB, 0x77)
        for p in (weights, kv, untagged):
            free(p)
        assert shim.report()["devices"][0]["live_bytes"] == 0
        print("released", shim.release())
        print("done")
        """
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "pause paused tag 'kv_cache'" in out and "16.00 MiB of contents discarded" in out, out
    assert "again cannot pause: tag 'kv_cache' is paused already" in out, out
    assert "unknown cannot pause: no region of this process is tagged 'nope' (its tags: 'weights', 'kv_cache')" in out
    assert "resume resumed tag 'kv_cache'" in out, out
    assert "keep paused tag 'weights'" in out and "kept in host memory" in out, out
    assert "whole paused:" in out and "done" in out, out


@needs_shim
def test_arguments_are_checked_before_the_shim_is_asked():
    result = run_child(
        """
        for bad in (lambda: shim.pause(3), lambda: shim.region(None).__enter__()):
            try:
                bad()
            except TypeError as e:
                print("type", e)
        try:
            with shim.region("two words"):
                pass
        except shim.ShimError as e:
            print("name", e)
        with shim.region("loader", all_threads=True):
            seen = []
            thread = threading.Thread(target=lambda: seen.append(shim.current_tag()))
            thread.start(); thread.join()
            print("thread", seen[0])
        """
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("type a tag is a str") == 2, result.stdout
    assert "name rmm_shim_region_begin: the tag 'two words' has characters other than" in result.stdout
    assert "thread loader" in result.stdout
