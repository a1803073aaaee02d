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
            _promote_young_objects()
            gc.enable()


def _promote_young_objects() -> None:
    """Move every tracked object into the oldest generation without looking at them.

    Whatever was allocated during the pause sits in the youngest generation, so the first collection after it would
    walk all of it (≈ 0.5 s after a plan of 150,000 pods). freeze() then unfreeze() moves them to the oldest
    generation instead; a later full collection still frees any cycles among them. Not when the caller froze objects
    itself: unfreeze() would release those too."""
    if gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()
