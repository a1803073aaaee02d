"""Print, as a pip.conf, the pip settings in effect here (configuration files and PIP_* variables).

ansible-test runs pip with a scrubbed environment (PATH, HOME, LC_ALL only), so PIP_CERT, PIP_INDEX_URL and friends
would be lost and the package index unreachable behind a TLS-intercepting proxy. run.sh writes this output to the
pip.conf of the HOME it gives ansible-test. A CA bundle named only by SSL_CERT_FILE/REQUESTS_CA_BUNDLE is kept too.
"""

import configparser
import os
import subprocess
import sys


def effective_settings() -> dict[str, dict[str, str]]:
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], check=True, capture_output=True,
                             text=True).stdout
    sections: dict[str, dict[str, str]] = {}
    for line in listing.splitlines():
        key, value = line.split("=", 1)
        section, name = key.rsplit(".", 1) if "." in key else ("", key)
        section = "global" if section in ("", ":env:") else section
        sections.setdefault(section, {})[name] = value.strip().strip("'\"")
    return sections


def main() -> None:
    sections = effective_settings()
    general = sections.setdefault("global", {})
    for variable in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        if "cert" not in general and os.path.isfile(os.environ.get(variable, "")):
            general["cert"] = os.environ[variable]
    config = configparser.ConfigParser(interpolation=None)
    for section, values in sections.items():
        config[section] = values
    config.write(sys.stdout)


if __name__ == "__main__":
    main()
