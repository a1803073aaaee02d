"""A registry of named plugins, in registration order: the one lookup table behind the descheduler plugins
(framework.py), the scheduler plugins (scheduler/interface.py) and the metrics sources."""

from __future__ import annotations

from typing import Generic, Iterator, Optional, Protocol, TypeVar


class Named(Protocol):
    name: str


T = TypeVar("T", bound=Named)


class NamedRegistry(Generic[T]):
    """name → entry; registering a name twice is a programming error."""

    what = "plugin"  # how an error names the entries

    def __init__(self) -> None:
        self._entries: dict[str, T] = {}

    def register(self, entry: T) -> None:
        if entry.name in self._entries:
            raise ValueError(f"{self.what} {entry.name} is registered twice")
        self._entries[entry.name] = entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def get(self, name: str) -> Optional[T]:
        return self._entries.get(name)
