"""`once`: a lock-free cached property for the engine's frozen pydantic models.

`functools.cached_property` takes one lock shared by every instance on Python 3.11, so
thousands of judgments running on many threads queue on it. The values cached here are
pure functions of frozen data: two threads computing one at once store equal values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class once(Generic[T]):  # lower case: used as a decorator, like cached_property
    def __init__(self, fn: Callable[[Any], T]) -> None:
        self._fn = fn
        self._name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        # A non-data descriptor: once stored, the instance's __dict__ answers directly.
        value = self._fn(obj)
        obj.__dict__[self._name] = value
        return value
