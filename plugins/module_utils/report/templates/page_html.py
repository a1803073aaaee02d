"""page.html: the frame of every HTML report, one self-contained file: inline CSS, no script, no external URL.
A report template extends it and fills the ``title`` and ``main`` blocks."""

NAME = "page.html"
TEMPLATE = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<meta name="color-scheme" content="light dark"/>
<title>{% block title %}{% endblock %}</title>
<style>
{% include "style.css" %}
</style>
</head>
<body>
<main>
{% block main %}{% endblock %}
</main>
</body>
</html>
"""
