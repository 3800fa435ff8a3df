# SPDX-License-Identifier: Apache-2.0
"""The preload shim and the commands that came with this package.

An installed package carries ``librmm_shim.so`` and the commands ``rmm-run``, ``rmm-ctl`` and
``rmm-replay`` inside it (``rmm/lib``, ``rmm/bin``); ``pip`` also puts launchers of the three
commands on ``PATH``. This module says where they are, and makes the environment that preloads
the shim into a child process::

    import subprocess, rmm.shim
    subprocess.run(["python", "train.py"], env=rmm.shim.environment())

A package built into a source tree (``-DRMM_BUILD_PYTHON=ON``) carries neither: each function
then says so and where the build tree keeps them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["COMMANDS", "command_path", "environment", "library_path"]

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
