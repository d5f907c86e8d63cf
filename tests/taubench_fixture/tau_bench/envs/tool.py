import abc
from typing import Any


class Tool(abc.ABC):
    @staticmethod
    def invoke(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def get_info() -> dict[str, Any]:
        raise NotImplementedError
