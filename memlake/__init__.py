"""memlake: long-term memory for AI agents, built as a batch data pipeline."""

from memlake.api import Memory
from memlake.settings import Settings, load_settings

__all__ = ["Memory", "Settings", "load_settings"]
