"""Python's garbage collection around the large structures of a plan.

Reading 150,000 pods allocates tens of millions of objects; each allocation burst triggers collections that walk
the whole (growing) heap although nothing is garbage yet: ``gc_paused`` pauses the cyclic collector while they are
built (reference counting still frees everything as usual). A module process exits once its result is written:
``keep_until_exit`` leaves such a structure for the operating system to reclaim at exit.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

_state = {"frozen_until_exit": False}  # whether keep_until_exit has frozen objects in this process


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
    generation instead; a later full collection still frees any cycles among them. Not when objects were frozen
    before (keep_until_exit, or the caller itself): unfreeze() would release those too. get_freeze_count() counts
    them one by one (0.35 s at 150,000 pods), so keep_until_exit's freeze is remembered instead."""
    if _state["frozen_until_exit"] or gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()


def keep_until_exit(structure: object) -> None:
    """Keep ``structure`` until the process exits, and let the operating system reclaim it then.

    For module processes only, which exit once their result is written: freeing a 150,000-pod snapshot object by
    object costs about 0.7 s (some 13 million objects) and gains nothing. ``structure`` goes into a reference cycle
    that nothing else reaches, and freeze() moves every tracked object, that cycle included, out of the collector's
    reach, so neither reference counting nor a collection (the one at interpreter exit included) frees it. A
    long-lived process would keep that memory for good.
    """
    holder: list = [structure]
    holder.append(holder)
    gc.freeze()
    _state["frozen_until_exit"] = True
