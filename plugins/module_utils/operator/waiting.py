"""Waiting for the cluster to reach a state, with a deadline on a monotonic clock."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, TypeVar

T = TypeVar("T")


@dataclass
class Waiter:
    """``timeout`` seconds in all for one wait, checking every ``interval`` seconds."""

    timeout: float
    interval: float
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], None] = field(default=time.sleep)

    def until(self, check: Callable[[], Optional[T]]) -> tuple[Optional[T], float]:
        """Call ``check`` until it returns something other than None; returns it (None on timeout) and the
        seconds waited. ``check`` may act between reads (approve an InstallPlan) and raise to stop early."""
        start = self.clock()
        deadline = start + self.timeout
        while True:
            found = check()
            if found is not None:
                return found, round(self.clock() - start, 2)
            remaining = deadline - self.clock()
            if remaining <= 0:
                return None, round(self.clock() - start, 2)
            self.sleep(min(self.interval, remaining))
