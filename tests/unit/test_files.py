"""The one file writer: whole files or nothing, no temporary file left behind, re-runs report no change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.files import write_atomically, write_if_changed


def test_write_creates_the_directory_and_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "plan.md"
    write_atomically(str(target), "first\n")
    write_atomically(str(target), "second\n")
    assert target.read_text() == "second\n"
    assert os.listdir(target.parent) == ["plan.md"]  # no temporary file left


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "plan.md"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(str(target), "half \udc80 written")  # a lone surrogate cannot be encoded as UTF-8
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["plan.md"]


def test_write_if_changed_reports_a_change_only_when_the_content_differs(tmp_path: Path) -> None:
    target = tmp_path / "metrics.json"
    assert write_if_changed(str(target), "{}\n", check_mode=True) is True
    assert not target.exists()  # check mode writes nothing
    assert write_if_changed(str(target), "{}\n") is True
    assert write_if_changed(str(target), "{}\n") is False
    assert target.read_text() == "{}\n"
