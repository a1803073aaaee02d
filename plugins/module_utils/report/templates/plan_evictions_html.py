"""plan_evictions.html: the evictions table of plan.html (``evictions``, see report/evictions_table.py). Every row
is in the page: the first page in the table, the others in a <details> under it (``evictions.rest_html``, their rows
already written as the table macro would write them: see report/evictions_table.py)."""

NAME = "plan_evictions.html"
TEMPLATE = """\
{% from "macros.html" import table %}
{% macro evictions_table(rows) %}
{% call(cell, column) table(evictions.headers, rows, numeric=evictions.numeric, nowrap=evictions.nowrap,
                            empty_text=evictions.empty_text) %}\
{% if column == 1 %}{% if cell.namespace %}<span class="ns">{{ cell.namespace }}/</span>{% endif %}{{ cell.name }}\
{% else %}{{ cell }}{% endif %}\
{% endcall %}
{% endmacro %}
<section><h2 id="evictions">Evictions ({{ evictions.total }})</h2>
{% if evictions.with_frequency %}
<p class="muted">{{ evictions.frequency_note }}</p>
{% endif %}
{% if evictions.rest %}
<p class="muted pager-note">The first {{ evictions.page_size }} of {{ "{:,}".format(evictions.count) }} evictions; \
the other {{ "{:,}".format(evictions.rest|length) }} are under the table.</p>
{% endif %}
{{ evictions_table(evictions.first) }}
{% if evictions.rest %}
<details class="pager-more"><summary>Evictions {{ "{:,}".format(evictions.page_size + 1) }}–\
{{ "{:,}".format(evictions.count) }}</summary>
{% call(rows) table(evictions.headers, [evictions.rest_html], numeric=evictions.numeric, whole_rows=true) %}\
{{ rows|safe }}{% endcall %}

</details>
{% endif %}
</section>
"""
