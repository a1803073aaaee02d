"""fleet-summary.html: the fleet summary of a dry run as a page (``fleet``, from report/fleet_report.py, and
``rows``, each cluster's row as the table shows it)."""

NAME = "fleet.html"
TEMPLATE = """\
{% extends "page.html" %}
{% from "macros.html" import table, badge, key_figure, bullet_list, mini_bar %}
{% macro counts(entries, long_names=false) %}\
{% if entries %}{{ bullet_list(entries, "plain wrap-anywhere" if long_names else "plain") }}{% else %}—{% endif %}\
{% endmacro %}
{% block title %}Descheduling fleet summary{% endblock %}
{% block main %}
<header><h1>Descheduling fleet summary</h1>
<p class="meta">{{ fleet_line }}</p>
<div class="figures">
{{ key_figure("Clusters", fleet.clusters_total) }}
{{ key_figure("OK", fleet.clusters_ok, "green") }}
{{ key_figure("Failed", fleet.clusters_failed, "red" if fleet.clusters_failed else "neutral") }}
{{ key_figure("Skipped cycle", fleet.clusters_skipped, "amber" if fleet.clusters_skipped else "neutral") }}
{{ key_figure("Evictions", fleet.evictions_total, "blue" if fleet.evictions_total else "neutral") }}
{{ key_figure("VMs to migrate", fleet.vms_to_migrate_total or 0) }}
</div>
</header>
{% if fleet.clusters_failed %}
<div class="notice tone-red" role="note"><strong>{{ fleet.clusters_failed }} cluster(s) failed: </strong>\
{{ failed_names|join(", ") }}. Their errors are in the table.</div>
{% endif %}

<section><h2 id="clusters">Clusters</h2>
{% call(row) table(("Cluster", "Status", "Evictions", "By plugin", "Top namespaces", "Top owners", "Limits reached",
                    "Errors / warnings"), rows, empty_text="No clusters.", whole_rows=true) %}
<tr{% if row.tone %} class="{{ row.tone }}"{% endif %}><th scope="row">\
{% if row.link %}<a href="{{ row.link }}">{{ row.cluster }}</a>{% else %}{{ row.cluster }}{% endif %}</th>\
{% if row.failed %}\
<td>{{ badge("FAILED", "failed") }}</td>\
<td colspan="6"><span class="error wrap-anywhere">Error: {{ row.error }}</span></td>\
{% else %}\
<td>{{ badge(row.status_label, row.status, row.skip_reason) }}</td>\
<td class="nowrap"><span class="num">{{ row.evictions }}</span> \
{{ mini_bar(row.bar, row.evictions ~ " evictions", width=80) }}</td>\
<td class="nowrap">{{ counts(row.by_plugin) }}</td><td>{{ counts(row.top_namespaces, true) }}</td>\
<td>{{ counts(row.top_owners, true) }}</td><td>{{ row.limits }}</td><td>{{ row.problems }}</td>\
{% endif %}</tr>
{% endcall %}
</section>

<section><h2 id="totals">Fleet totals</h2>
{{ table(("Plugin", "Evictions"), totals, numeric=(1,), empty_text="No evictions planned.") }}
</section>
{% if changes %}

<section><h2>Since the previous run</h2>
{{ bullet_list(changes) }}
</section>
{% endif %}
{% endblock %}
"""
