# SPDX-License-Identifier: Apache-2.0
"""The debug logger's level (RMM_DEBUG_LOG_LEVEL sets it at start; RMM_DEBUG_LOG_FILE its file)."""

from rmm._rmm import (
    flush_logger,
    get_flush_level,
    get_logging_level,
    level_enum,
    set_flush_level,
    set_logging_level,
    should_log,
)

__all__ = [
    "flush_logger",
    "get_flush_level",
    "get_logging_level",
    "level_enum",
    "set_flush_level",
    "set_logging_level",
    "should_log",
]
