"""Unit tests import the collection as ansible_collections.descheduler.fleet (the Makefile links it there)."""

import os
import sys

_COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "build", "collections"))
if os.path.isdir(_COLLECTIONS) and _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)
sys.path.insert(0, os.path.dirname(__file__))
