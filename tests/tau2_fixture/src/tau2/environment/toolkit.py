"""Toy stand-ins for tau2's toolkit helpers (written for the fixture)."""

from enum import Enum


class ToolType(str, Enum):
    READ = "read"
    WRITE = "write"
    GENERIC = "generic"


def is_tool(tool_type=ToolType.READ, mutates_state=None):
    def mark(function):
        function.is_tool = True
        function.mutates = tool_type == ToolType.WRITE if mutates_state is None else mutates_state
        return function

    return mark


class ToolKitBase:
    def __init__(self, db):
        self.db = db
