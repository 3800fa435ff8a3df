# SPDX-License-Identifier: Apache-2.0
"""``python -m rmm.run [RMM-RUN OPTIONS --] SCRIPT [ARGS...]``: runs a Python script under the shim.

The same as ``rmm-run [OPTIONS] -- python SCRIPT [ARGS...]`` with this interpreter, for those who
start programs from Python; ``rmm-run --help`` lists the options (``--report``, ``--config FILE``,
``--pool-size SIZE``, ...). Without ``--``, every argument is the script's.
"""

from __future__ import annotations

import os
import sys

from rmm.shim import command_path


def command_line(argv: list[str]) -> list[str]:
    """The ``rmm-run`` command line that runs ``argv`` (this module's arguments)."""
    if "--" in argv:
        split = argv.index("--")
        options, program = argv[:split], argv[split + 1 :]
    else:
        options, program = [], argv
    if not program:
        raise SystemExit("usage: python -m rmm.run [RMM-RUN OPTIONS --] SCRIPT [ARGS...]")
    return [command_path("rmm-run"), *options, "--", sys.executable, *program]


def main() -> None:
    command = command_line(sys.argv[1:])
    os.execv(command[0], ["rmm-run", *command[1:]])


if __name__ == "__main__":
    main()
