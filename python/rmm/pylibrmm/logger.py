"""The debug logger's level (RMM_DEBUG_LOG_LEVEL sets it at start; RMM_DEBUG_LOG_FILE its file)."""

from rmm._rmm import get_logging_level, level_enum, set_logging_level, should_log

__all__ = ["get_logging_level", "level_enum", "set_logging_level", "should_log"]
