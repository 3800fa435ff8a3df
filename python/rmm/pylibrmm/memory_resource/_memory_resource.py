# SPDX-License-Identifier: Apache-2.0
"""The module RMM's Python package defines its resources in: the same classes, and _flush_logs."""

from rmm.mr import *  # noqa: F401,F403
from rmm.mr import __all__  # noqa: F401
from rmm.mr import _flush_logs  # noqa: F401
