"""Connection options shared by every module that talks to a cluster, as plain data (no Ansible import).

The option names, types, aliases and ``K8S_AUTH_*`` environment variables are those of kubernetes.core's
``AUTH_ARG_SPEC``, so playbooks, ``module_defaults`` and the AWX/AAP "OpenShift or Kubernetes API Bearer Token"
credential (which injects ``K8S_AUTH_*``) work unchanged. The environment fallback is done by
``cluster.client.resolve_connection`` rather than by Ansible's ``fallback`` so the documentation stays identical
to kubernetes.core's ``k8s_auth_options``.
"""

from __future__ import annotations

PROXY_HEADERS_SPEC: dict[str, dict] = {
    "proxy_basic_auth": {"type": "str", "no_log": True},
    "basic_auth": {"type": "str", "no_log": True},
    "user_agent": {"type": "str"},
}

CONNECTION_ARG_SPEC: dict[str, dict] = {
    "kubeconfig": {"type": "raw"},
    "context": {"type": "str"},
    "host": {"type": "str"},
    "api_key": {"type": "str", "no_log": True},
    "username": {"type": "str"},
    "password": {"type": "str", "no_log": True},
    "validate_certs": {"type": "bool", "aliases": ["verify_ssl"]},
    "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"]},
    "client_cert": {"type": "path", "aliases": ["cert_file"]},
    "client_key": {"type": "path", "aliases": ["key_file"]},
    "proxy": {"type": "str"},
    "no_proxy": {"type": "str"},
    "proxy_headers": {"type": "dict", "options": PROXY_HEADERS_SPEC},
    "persist_config": {"type": "bool"},
    "impersonate_user": {"type": "str"},
    "impersonate_groups": {"type": "list", "elements": "str"},
}

# Every module that talks to a cluster also takes the UID the cluster must have (doc fragment cluster_identity).
IDENTITY_ARG_SPEC: dict[str, dict] = {
    "expected_cluster_uid": {"type": "str"},
}

# Environment variables read when an option is not set, first match wins. The first name is the documented one
# (kubernetes.core's client-library name); kubernetes.core also accepts K8S_AUTH_<OPTION NAME>, so do we.
CONNECTION_ENV_VARS: dict[str, tuple[str, ...]] = {
    "kubeconfig": ("K8S_AUTH_KUBECONFIG",),
    "context": ("K8S_AUTH_CONTEXT",),
    "host": ("K8S_AUTH_HOST",),
    "api_key": ("K8S_AUTH_API_KEY",),
    "username": ("K8S_AUTH_USERNAME",),
    "password": ("K8S_AUTH_PASSWORD",),
    "validate_certs": ("K8S_AUTH_VERIFY_SSL", "K8S_AUTH_VALIDATE_CERTS"),
    "ca_cert": ("K8S_AUTH_SSL_CA_CERT", "K8S_AUTH_CA_CERT"),
    "client_cert": ("K8S_AUTH_CERT_FILE", "K8S_AUTH_CLIENT_CERT"),
    "client_key": ("K8S_AUTH_KEY_FILE", "K8S_AUTH_CLIENT_KEY"),
    "proxy": ("K8S_AUTH_PROXY",),
    "no_proxy": ("K8S_AUTH_NO_PROXY",),
    "persist_config": ("K8S_AUTH_PERSIST_CONFIG",),
    "impersonate_user": ("K8S_AUTH_IMPERSONATE_USER",),
    "impersonate_groups": ("K8S_AUTH_IMPERSONATE_GROUPS",),
}

# proxy_headers is a dict: each suboption has its own variable, K8S_AUTH_PROXY_HEADERS_<SUBOPTION>.
PROXY_HEADERS_ENV_PREFIX = "K8S_AUTH_PROXY_HEADERS_"

# Environment strings that mean False for a bool option (kubernetes.core's rule); anything else means True.
FALSE_STRINGS = frozenset(["0", "false", "no"])


# The Prometheus options of the modules that query it (doc fragment descheduler.fleet.prometheus); prometheus_url is
# declared by each module, since what it defaults to differs.
PROMETHEUS_ARG_SPEC: dict[str, dict] = {
    "prometheus_token": {"type": "str", "no_log": True},
    # names the Secret holding the token (namespace, name), not the token itself
    "prometheus_token_secret": {"type": "dict", "no_log": False, "options": {
        "namespace": {"type": "str", "required": True}, "name": {"type": "str", "required": True}}},
    "prometheus_ca_cert": {"type": "path"},
    "prometheus_validate_certs": {"type": "bool", "default": True},
}
