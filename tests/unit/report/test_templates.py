"""The reports come from Jinja2 templates shipped with the collection; a user's template directory replaces any of
them by name, and HTML templates escape whatever the plan holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.executor.report import write_evict_report
from ansible_collections.descheduler.fleet.plugins.module_utils.report.fleet_report import write_fleet_summary
from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import (
    render_html,
    render_markdown,
    write_plan_report,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templates import TEMPLATES
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templating import ReportTemplateError
from ansible_collections.descheduler.fleet.plugins.module_utils.whatif import report as whatif_report

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sample_plan.json"
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def plan() -> dict:
    plan = json.loads(FIXTURE.read_text(encoding="utf-8"))
    plan["evictions"][0]["name"] = HOSTILE
    return plan


def test_a_user_template_replaces_the_shipped_one_of_the_same_name_only(plan: dict, tmp_path: Path) -> None:
    (tmp_path / "plan_evictions.html").write_text(
        '<section id="my-evictions">{% for row in evictions.first %}<p class="pod">{{ row[1].name }}</p>'
        "{% endfor %}</section>\n", encoding="utf-8")
    document = render_html(plan, cluster="prod", template_dir=str(tmp_path))
    assert '<section id="my-evictions"><p class="pod">&lt;script&gt;alert(1)&lt;/script&gt;</p>' in document
    assert 'id="evictions"' not in document  # the shipped evictions table is gone
    assert '<h2 id="summary">Summary</h2>' in document and "<style>" in document  # the rest is shipped
    assert "<script" not in document
    # the Markdown report has its own templates: untouched
    assert render_markdown(plan, template_dir=str(tmp_path)) == render_markdown(plan)


def test_shipped_html_escapes_a_pod_name(plan: dict) -> None:
    document = render_html(plan)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in document and "<script" not in document


def test_user_templates_reach_the_written_files(plan: dict, tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "plan.md").write_text("# {{ view.cluster }}: {{ view.total }} evictions\n", encoding="utf-8")
    (templates / "style.css").write_text("body { color: rebeccapurple; }\n", encoding="utf-8")
    paths = write_plan_report(plan, str(tmp_path / "out"), cluster="prod", template_dir=str(templates))
    assert Path(paths["markdown"]).read_text(encoding="utf-8") == "# prod: 10 evictions\n"
    html = Path(paths["html"]).read_text(encoding="utf-8")
    assert "body { color: rebeccapurple; }" in html and "--cpu:" not in html
    fleet = write_fleet_summary([{"cluster": "prod", "ok": True, "plan": plan}], str(tmp_path / "fleet"),
                                template_dir=str(templates))
    assert "rebeccapurple" in Path(fleet["html"]).read_text(encoding="utf-8")


def test_a_broken_or_missing_template_directory_names_itself(plan: dict, tmp_path: Path) -> None:
    with pytest.raises(ReportTemplateError, match="is not a directory"):
        render_html(plan, template_dir=str(tmp_path / "missing"))
    (tmp_path / "plan.html").write_text("{% if %}\n", encoding="utf-8")
    with pytest.raises(ReportTemplateError, match=r"report template plan.html \(templates from .*\): "
                                                  "TemplateSyntaxError"):
        render_html(plan, template_dir=str(tmp_path))
    with pytest.raises(ReportTemplateError):
        write_plan_report(plan, str(tmp_path / "out"), template_dir=str(tmp_path))
    assert os.listdir(tmp_path / "out") == []  # rendered before anything is written


def test_every_shipped_page_is_self_contained() -> None:
    shipped = "".join(TEMPLATES.values()).lower()
    for forbidden in ("<script", "http://", "https://", "<link", "@import", "url("):
        assert forbidden not in shipped


def test_without_jinja2_the_error_says_what_to_install() -> None:
    code = ("import sys; sys.modules['jinja2'] = None\n"
            "from ansible_collections.descheduler.fleet.plugins.module_utils.report.plan_report import render_html\n"
            "try:\n    render_html({})\nexcept Exception as error:\n    print(type(error).__name__, error)\n")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                            check=True).stdout
    assert output.startswith("ReportTemplateError ") and "install Jinja2" in output
    assert "on the host that runs the module" in output


def test_whatif_and_evict_reports_take_the_template_directory_too(tmp_path: Path) -> None:
    (tmp_path / "whatif.html").write_text('{% extends "page.html" %}{% block main %}<p>{{ verdict }}</p>'
                                          "{% endblock %}\n", encoding="utf-8")
    (tmp_path / "evict.md").write_text("{{ total }} pods, {{ cluster }}\n", encoding="utf-8")
    result = {"best": "a", "best_reason": "<b>a</b> evicts least", "candidates": []}
    assert "<p>&lt;b&gt;a&lt;/b&gt; evicts least</p>" in whatif_report.render_html(result, template_dir=str(tmp_path))
    assert whatif_report.render_markdown(result, template_dir=str(tmp_path)).startswith("# What-if\n")  # shipped
    files = write_evict_report({"counts": {"total": 3}}, str(tmp_path / "out"), "prod", template_dir=str(tmp_path))
    assert Path(files["markdown"]).read_text(encoding="utf-8") == "3 pods, prod\n"
