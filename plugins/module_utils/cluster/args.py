"""The option groups shared by several modules, as plain data (no Ansible import); each has a doc fragment.

The connection options (every module that talks to a cluster) have the names, types, aliases and ``K8S_AUTH_*``
environment variables of kubernetes.core's ``AUTH_ARG_SPEC``, so playbooks, ``module_defaults`` and the AWX/AAP
"OpenShift or Kubernetes API Bearer Token" credential (which injects ``K8S_AUTH_*``) work unchanged. The environment
fallback is done by ``cluster.client.resolve_connection`` rather than by Ansible's ``fallback`` so the documentation
stays identical to kubernetes.core's ``k8s_auth_options``.
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


# The options below are shared by several modules. Each group has its doc fragment (plugins/doc_fragments/<name>.py)
# holding the same names, types and defaults; tests/unit/test_module_options.py checks that they agree, so a default
# is written here and in that fragment only, never in a module.

# Waiting for what a task installed or removed (doc fragment descheduler.fleet.wait). 600 s, the time an OLM
# install may take (bundle unpack, CSV, operator Deployment), is also the bound of a descheduler rollout: a wait
# ends as soon as the state is reached, so the bound only delays the report of a rollout that will not finish.
WAIT_ARG_SPEC: dict[str, dict] = {
    "wait": {"type": "bool", "default": True},
    "wait_timeout": {"type": "int", "default": 600},
    "wait_sleep": {"type": "int", "default": 5},
}

# One change at a time per cluster: how long to wait for the change Lease (doc fragment descheduler.fleet.change_lock).
CHANGE_LOCK_ARG_SPEC: dict[str, dict] = {
    "lock_timeout": {"type": "float", "default": 0},
    "on_interrupted": {"type": "str", "choices": ["fail", "rollback", "resume"], "default": "fail"},
}

# The OLM Subscription of an operator (doc fragment descheduler.fleet.olm).
OLM_ARG_SPEC: dict[str, dict] = {
    "channel": {"type": "str", "default": "stable"},
    "source": {"type": "str", "default": "redhat-operators"},
    "source_namespace": {"type": "str", "default": "openshift-marketplace"},
    "starting_csv": {"type": "str"},
    "install_plan_approval": {"type": "str", "choices": ["Automatic", "Manual"], "default": "Automatic"},
}

# Where a module writes its report files and the cluster name they show (doc fragment descheduler.fleet.report).
REPORT_ARG_SPEC: dict[str, dict] = {
    "report_dir": {"type": "path"},
    "cluster_name": {"type": "str"},
    "report_template_dir": {"type": "path"},
}

# Unknown fields of a KubeDescheduler spec (doc fragment descheduler.fleet.field_validation).
FIELD_VALIDATION_ARG_SPEC: dict[str, dict] = {
    "field_validation": {"type": "str", "choices": ["Strict", "Warn", "Ignore"], "default": "Strict"},
}

# Paging of the list requests to a live cluster (doc fragment descheduler.fleet.listing).
LISTING_ARG_SPEC: dict[str, dict] = {
    "page_size": {"type": "int", "default": 500},
    "watch_list": {"type": "bool", "default": True},
}
