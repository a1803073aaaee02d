"""Pausing Python's cyclic garbage collector while large acyclic structures are built.

Reading 150,000 pods allocates tens of millions of objects; each allocation burst triggers collections that walk
the whole (growing) heap although nothing is garbage yet. Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
