"""write_report_files, the one writer of every report's files (plan, whatif, fleet summary, whatif fleet)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import write_report_files

NAMES = {"json": "r.json", "markdown": "r.md"}


def test_each_text_goes_to_its_file_and_the_paths_come_back(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "out"
    paths = write_report_files(str(out), NAMES, lambda: {"json": "{}\n", "markdown": "# r\n"})
    assert paths == {"json": str(out / "r.json"), "markdown": str(out / "r.md")}
    assert (out / "r.json").read_text(encoding="utf-8") == "{}\n"
    assert (out / "r.md").read_text(encoding="utf-8") == "# r\n"


def test_a_rendering_failure_leaves_the_previous_report_untouched(tmp_path: Path) -> None:
    write_report_files(str(tmp_path), NAMES, lambda: {"json": "old\n", "markdown": "old\n"})

    def broken() -> dict[str, str]:
        raise ValueError("template broken")

    with pytest.raises(ValueError, match="template broken"):
        write_report_files(str(tmp_path), NAMES, broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.md"]
    assert {p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == {"old\n"}


def test_the_directory_exists_before_rendering_starts(tmp_path: Path) -> None:
    out = tmp_path / "out"

    def render_checking_the_directory() -> dict[str, str]:
        assert out.is_dir()
        return {"json": "{}\n", "markdown": "# r\n"}

    write_report_files(str(out), NAMES, render_checking_the_directory)
