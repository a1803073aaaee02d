"""Stand-in for pip's get-pip.py, which ansible-test downloads from a host this network cannot reach.

ansible-test runs the cached ``~/.ansible/test/cache/get_pip_<version>.py`` with pip-install arguments to put pip
into the empty virtual environments it creates. We do the same with the standard library's ensurepip followed by a
normal ``pip install`` of the requested versions from the package index.
"""

import ensurepip
import os
import subprocess
import sys

GET_PIP_ONLY_OPTIONS = ("--no-setuptools", "--no-wheel")


def main() -> None:
    arguments = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY_OPTIONS]
    # ensurepip sets PIP_CONFIG_FILE=/dev/null in os.environ and leaves it there: keep the caller's environment so
    # the pip below reads the machine's pip configuration (index, CA bundle).
    environment = dict(os.environ)
    ensurepip.bootstrap(upgrade=True)
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *arguments], env=environment)


if __name__ == "__main__":
    main()
