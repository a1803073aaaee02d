"""Renders the reports' Jinja2 templates: those shipped in report/templates/, or a user's of the same name.

The shipped templates are Python string constants (report/templates/*.py) because AnsiballZ ships only the Python
files of module_utils to the host that runs a module. A user's ``template_dir`` comes first: a file there named like
a shipped template ("plan.html", "style.css", "macros.html", ...) replaces it, the others stay.

Templates named ``*.html`` are autoescaped: every value is escaped as ``html.escape`` does unless it is markup
already. Markdown templates are not; their values go through the ``md`` filter (no table break, no raw HTML).
"""

from __future__ import annotations

import functools
import os
from typing import Any, Optional

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError
from ansible_collections.descheduler.fleet.plugins.module_utils.report.format import (
    css_token,
    html_text,
    markdown_cell,
    markdown_text,
    number,
    percent,
    truncate,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.report.templates import TEMPLATES

try:
    from jinja2 import (
        ChoiceLoader,
        DictLoader,
        Environment,
        FileSystemLoader,
        StrictUndefined,
        TemplateError,
        pass_eval_context,
    )
    from markupsafe import Markup
except ImportError as error:  # the host that runs the module may lack it: say so when a report is written
    JINJA2_IMPORT_ERROR: Optional[ImportError] = error
    TEMPLATE_ERRORS: tuple = ()
else:
    JINJA2_IMPORT_ERROR = None
    TEMPLATE_ERRORS = (TemplateError, OSError)  # OSError: a user's template that cannot be read


class ReportTemplateError(FleetError):
    """A report cannot be rendered: Jinja2 is missing on the host, or a user's template is wrong."""


def render(name: str, template_dir: Optional[str] = None, **context: Any) -> str:
    """The template ``name`` rendered with ``context``. Each line's newline is kept and a block tag's own line
    vanishes (trim_blocks, lstrip_blocks); the text ends in exactly one newline, whatever a user's file ends with."""
    environment = _environment(os.path.abspath(template_dir) if template_dir else None)
    try:
        text = environment.get_template(name).render(**context)
    except TEMPLATE_ERRORS as error:
        where = f" (templates from {template_dir}, then the collection's)" if template_dir else ""
        raise ReportTemplateError(f"report template {name}{where}: {type(error).__name__}: {error}") from error
    return text.rstrip("\n") + "\n"


@functools.lru_cache(maxsize=8)
def _environment(template_dir: Optional[str]) -> Any:
    if JINJA2_IMPORT_ERROR is not None:
        raise ReportTemplateError("the reports are rendered with Jinja2, which cannot be imported here "
                                  f"({JINJA2_IMPORT_ERROR}): install Jinja2 (pip install jinja2) on the host that "
                                  "runs the module") from JINJA2_IMPORT_ERROR
    if template_dir is not None and not os.path.isdir(template_dir):
        raise ReportTemplateError(f"report template directory {template_dir} is not a directory")
    loaders = [FileSystemLoader(template_dir)] if template_dir else []
    environment = Environment(
        loader=ChoiceLoader([*loaders, DictLoader(TEMPLATES)]), autoescape=_is_html, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True, undefined=StrictUndefined, finalize=_finalize,
        auto_reload=False)
    environment.filters.update(md=markdown_text, md_cell=markdown_cell, number=number, percent=percent,
                               truncate_text=truncate, css_token=css_token)
    return environment


def _is_html(name: Optional[str]) -> bool:
    return bool(name) and name.endswith(".html")


def _finalize_value(autoescape: bool, value: Any) -> Any:
    """In HTML, escape as html_text does and print None as nothing; Markdown prints values as Python's str() does."""
    if not autoescape or hasattr(value, "__html__"):
        return value
    return Markup(html_text(value))


if JINJA2_IMPORT_ERROR is None:
    @pass_eval_context
    def _finalize(eval_context: Any, value: Any) -> Any:
        return _finalize_value(eval_context.autoescape, value)
else:
    _finalize = None
