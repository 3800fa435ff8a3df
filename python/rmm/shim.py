# SPDX-License-Identifier: Apache-2.0
"""The preload shim: where it is, and its control of a process that runs under it.

An installed package carries ``librmm_shim.so`` and the commands ``rmm-run``, ``rmm-ctl`` and
``rmm-replay`` inside it (``rmm/lib``, ``rmm/bin``); ``pip`` also puts launchers of the three
commands on ``PATH``. This module says where they are, and makes the environment that preloads
the shim into a child process::

    import subprocess, rmm.shim
    subprocess.run(["python", "train.py"], env=rmm.shim.environment())

A package built into a source tree (``-DRMM_BUILD_PYTHON=ON``) carries neither: each function
then says so and where the build tree keeps them.

In a process that runs under the shim (``rmm-run``, ``python -m rmm.run``, or the environment
above), the rest of this module controls it: tag memory with :func:`region`, give it back with
:func:`pause` and have it again with :func:`resume`, read :func:`report` and :func:`state`::

    with rmm.shim.region("weights"):
        model = build_model().cuda()
    with rmm.shim.region("kv_cache", keep=False):
        cache = torch.empty(n, device="cuda")
    rmm.shim.pause("kv_cache")        # its memory back to the device, its contents dropped
    rmm.shim.resume("kv_cache")       # mapped again at the same addresses

Each refusal raises :class:`ShimError` with the shim's reason; outside the shim every control
function raises :class:`NotUnderShimError`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import tempfile
from collections.abc import Iterator, Mapping

__all__ = [
    "COMMANDS",
    "NotUnderShimError",
    "ShimError",
    "available",
    "command_path",
    "current_tag",
    "environment",
    "library_path",
    "pause",
    "region",
    "release",
    "report",
    "resume",
    "state",
]

#: The commands the package carries.
COMMANDS = ("rmm-run", "rmm-ctl", "rmm-replay")

_HERE = os.path.dirname(os.path.abspath(__file__))


def _missing(what: str, path: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"{what} is not in this rmm package ({path}): it comes with the package that pip installs "
        "(scripts/build-wheel.sh builds it); a package built in a source tree finds it in that tree "
        "(build/shim/librmm_shim.so, build/tools/)"
    )


def library_path() -> str:
    """The path of the package's ``librmm_shim.so``.

    Raises:
        FileNotFoundError: the package carries no shim (a package built in a source tree).
    """
    path = os.path.join(_HERE, "lib", "librmm_shim.so")
    if not os.path.isfile(path):
        raise _missing("librmm_shim.so", path)
    return path


def command_path(name: str) -> str:
    """The path of one of the package's commands (``rmm-run``, ``rmm-ctl``, ``rmm-replay``).

    Raises:
        ValueError: ``name`` is not one of them.
        FileNotFoundError: the package carries no commands (a package built in a source tree).
    """
    if name not in COMMANDS:
        raise ValueError(f"'{name}' is not a command of the package; expected one of {', '.join(COMMANDS)}")
    path = os.path.join(_HERE, "bin", name)
    if not os.access(path, os.X_OK):
        raise _missing(name, path)
    return path


def environment(base: Mapping[str, str] | None = None, config: str | os.PathLike | None = None) -> dict[str, str]:
    """A copy of ``base`` (``os.environ`` by default) that preloads the shim into a child process.

    The shim goes first in ``LD_PRELOAD``, ahead of what was there, except a sanitizer's runtime,
    which must stay first (as ``rmm-run`` does). ``config`` names a configuration file
    (``RMM_CONFIG``); without it, the one already in ``base`` or the built-in stack serves.
    """
    env = dict(os.environ if base is None else base)
    shim = library_path()
    preloaded = [entry for entry in env.get("LD_PRELOAD", "").replace(" ", ":").split(":") if entry]
    preloaded = [entry for entry in preloaded if os.path.basename(entry) != "librmm_shim.so"]
    sanitizers = [e for e in preloaded if os.path.basename(e).startswith(("libasan.", "libtsan.", "libubsan.", "liblsan."))]
    others = [e for e in preloaded if e not in sanitizers]
    env["LD_PRELOAD"] = ":".join([*sanitizers, shim, *others])
    if config is not None:
        path = os.fspath(config)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"the configuration file {path} does not exist")
        env["RMM_CONFIG"] = os.path.abspath(path)
    return env


class ShimError(RuntimeError):
    """The shim refused a control call; the message is its reason and what to do."""


class NotUnderShimError(ShimError):
    """This process does not run under the shim, or runs with it switched off."""


_PAUSE_DISCARD = 1
_PAUSE_KEEP = 2
_REGION_DISCARD = 1
_REGION_ALL_THREADS = 2
_shim_functions: ctypes.CDLL | None = None


def _loaded() -> ctypes.CDLL | None:
    """The preloaded shim's functions, or None when the process does not run under it."""
    global _shim_functions
    if _shim_functions is None:
        process = ctypes.CDLL(None, use_errno=True)  # the global scope, where a preloaded library's symbols are
        if not hasattr(process, "rmm_shim_region_begin"):
            return None
        process.rmm_shim_enabled.restype = ctypes.c_int
        process.rmm_shim_release.restype = ctypes.c_size_t
        process.rmm_shim_print_report.argtypes = [ctypes.c_char_p]
        process.rmm_shim_last_message.restype = ctypes.c_char_p
        process.rmm_shim_pause_tag.argtypes = [ctypes.c_char_p, ctypes.c_uint]
        process.rmm_shim_resume_tag.argtypes = [ctypes.c_char_p]
        process.rmm_shim_region_begin.argtypes = [ctypes.c_char_p, ctypes.c_uint]
        process.rmm_shim_region_current.restype = ctypes.c_char_p
        _shim_functions = process
    return _shim_functions


def _shim() -> ctypes.CDLL:
    shim = _loaded()
    if shim is None:
        raise NotUnderShimError(
            "this process does not run under the rmm shim: start it with rmm-run or python -m rmm.run, or "
            "give a child process rmm.shim.environment()"
        )
    if not shim.rmm_shim_enabled():
        raise NotUnderShimError(
            "the rmm shim is switched off in this process (RMM_SHIM_ENABLED=false): it serves no memory"
        )
    return shim


def _answer(shim: ctypes.CDLL, result: int) -> str:
    message = (shim.rmm_shim_last_message() or b"").decode(errors="replace")
    if result != 0:
        raise ShimError(message)
    return message


def _tag_argument(tag: str | None) -> bytes | None:
    if tag is None:
        return None
    if not isinstance(tag, str):
        raise TypeError(f"a tag is a str, not {type(tag).__name__}")
    return tag.encode()


def available() -> bool:
    """Whether this process runs under the shim, switched on."""
    shim = _loaded()
    return shim is not None and bool(shim.rmm_shim_enabled())


def pause(tag: str | None = None, *, discard: bool | None = None) -> str:
    """Gives the device memory of ``tag`` (every tag and untagged memory when None) back to the device.

    Waits for the device work submitted so far; every block keeps its address. ``discard=None``
    does as each tag's :func:`region` said (untagged memory is kept); True drops every content,
    False keeps them all in host memory. Until :func:`resume`, allocations under the paused tag
    wait for it, and device work on its blocks is the program's error. Returns what was done.

    Raises:
        ShimError: the shim refused (no region named the tag, it is paused already, a stream is
            capturing a CUDA graph, blocks are exported through CUDA IPC, ...), nothing changed.
    """
    shim = _shim()
    flags = 0 if discard is None else (_PAUSE_DISCARD if discard else _PAUSE_KEEP)
    return _answer(shim, shim.rmm_shim_pause_tag(_tag_argument(tag), flags))


def resume(tag: str | None = None) -> str:
    """Maps the memory of ``tag`` (everything paused when None) back, with its kept contents.

    Raises:
        ShimError: the shim refused (the tag is not paused, the device lacks the memory: it stays
            paused and a later call can succeed).
    """
    shim = _shim()
    return _answer(shim, shim.rmm_shim_resume_tag(_tag_argument(tag)))


def release() -> int:
    """Gives every free byte of the shim's pools back to the device; returns the bytes."""
    return int(_shim().rmm_shim_release())


def report() -> dict:
    """The shim's report now, as the JSON of ``rmm-ctl PID report --json`` (a dict)."""
    shim = _shim()
    with tempfile.TemporaryDirectory(prefix="rmm-report-") as folder:
        path = os.path.join(folder, "report.json")
        if shim.rmm_shim_print_report(path.encode()) != 0:
            error = ctypes.get_errno()
            raise ShimError(f"the shim could not write its report to {path}: {os.strerror(error) if error else 'error'}")
        with open(path, encoding="utf-8") as file:
            return json.load(file)


def current_tag() -> str | None:
    """The tag this thread allocates under now, or None when untagged."""
    name = _shim().rmm_shim_region_current()
    return None if name is None else name.decode()


def state() -> dict:
    """Whether the process is paused, and each tag's memory and pauses.

    ``{"paused": bool, "pausing": bool, "tags": {name: {"paused", "keep", "live_bytes",
    "mapped_bytes", "host_bytes", "pauses"}}}``: ``mapped_bytes`` is the device memory the tag
    holds now (none while paused), ``host_bytes`` the contents its last pause kept in host memory.
    """
    now = report()
    pause_state = now["pause"]
    tags = {
        t["tag"]: {
            "paused": t["paused"],
            "keep": not t["discards"],
            "live_bytes": t["live_bytes"],
            "mapped_bytes": t["reserved_bytes"],
            "host_bytes": t["saved_bytes"] if t["paused"] else 0,
            "pauses": t["pauses"],
        }
        for t in now["tags"]
    }
    return {"paused": pause_state["paused"], "tags": tags}


@contextlib.contextmanager
def region(tag: str, *, keep: bool = True, all_threads: bool = False) -> Iterator[str]:
    """Tags the device memory allocated inside the ``with`` block, so that it pauses on its own.

    The memory this thread allocates inside belongs to ``tag``, whatever framework allocates it
    (PyTorch with its cache off, CuPy, JAX in ``cuda_async`` mode, plain CUDA); regions nest.
    ``keep=False`` makes a pause drop the tag's contents unless the pause says otherwise.
    ``all_threads=True`` covers every thread that is in no region of its own, for frameworks that
    allocate on threads of their own (one such region at a time). The memory keeps its tag after
    the block ends.

    Raises:
        ShimError: a bad tag name, too many tags (15), regions nested too deeply (16), or a second
            region over all threads.
    """
    if not isinstance(tag, str):
        raise TypeError(f"a tag is a str, not {type(tag).__name__}")
    shim = _shim()
    flags = (0 if keep else _REGION_DISCARD) | (_REGION_ALL_THREADS if all_threads else 0)
    _answer(shim, shim.rmm_shim_region_begin(tag.encode(), flags))
    try:
        yield tag
    finally:
        shim.rmm_shim_region_end()
