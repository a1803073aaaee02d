"""The one client factory: connection options (module params, then ``K8S_AUTH_*``) to a ``kubernetes.client.ApiClient``.

Loading follows kubernetes.core: host with api_key, username/password or client_cert/client_key needs no kubeconfig;
else a given kubeconfig (path(s) or dict) and/or context is loaded; else the in-cluster service account, then the
default kubeconfig. Explicit options then override what was loaded. Where kubernetes.core would fail obscurely or
quietly pick another cluster, we raise ``ClusterConnectionError`` naming the option to fix:

- a kubeconfig file that does not exist, or a context it does not define (the message lists the contexts);
- no connection settings at all (never silently pick up ``~/.kube/config`` when a kubeconfig or context was given);
- impersonate_groups without impersonate_user (the API server refuses it).

Each call builds its own ``Configuration``: the library's global default is never touched, so one process can talk
to several clusters.
"""

from __future__ import annotations

import os
import traceback
from typing import Any, Mapping, Optional, Sequence

from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import (
    CONNECTION_ARG_SPEC,
    CONNECTION_ENV_VARS,
    FALSE_STRINGS,
    PROXY_HEADERS_ENV_PREFIX,
    PROXY_HEADERS_SPEC,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterConnectionError

try:
    import kubernetes
    import urllib3
    import yaml
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import ENV_KUBECONFIG_PATH_SEPARATOR

    try:
        from urllib3 import HTTPHeaderDict
    except ImportError:  # urllib3 1.26
        from urllib3._collections import HTTPHeaderDict
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR: Optional[str] = traceback.format_exc()
    ENV_KUBECONFIG_PATH_SEPARATOR = ";" if os.name == "nt" else ":"
else:
    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None

__all__ = [
    "ClusterConnectionError",
    "HAS_KUBERNETES",
    "KUBERNETES_IMPORT_ERROR",
    "build_api_client",
    "build_configuration",
    "resolve_connection",
]

USER_AGENT = "descheduler.fleet (Ansible collection)"
DEFAULT_KUBECONFIG = "~/.kube/config"
_BOOL_OPTIONS = frozenset(name for name, spec in CONNECTION_ARG_SPEC.items() if spec.get("type") == "bool")
_PATH_OPTIONS = ("ca_cert", "client_cert", "client_key")
_SETTINGS_HINT = ("set kubeconfig (K8S_AUTH_KUBECONFIG) and context (K8S_AUTH_CONTEXT), "
                  "or host (K8S_AUTH_HOST) with api_key (K8S_AUTH_API_KEY)")


# ---- option resolution ------------------------------------------------------------------------------------------


def resolve_connection(params: Mapping[str, Any], env: Optional[Mapping[str, str]] = None) -> dict:
    """Every connection option by its canonical name: the module parameter (or one of its aliases) if set, else its
    ``K8S_AUTH_*`` environment variable (``env`` defaults to os.environ), else None. Env strings are converted
    (bools, comma lists)."""
    env = os.environ if env is None else env
    resolved: dict[str, Any] = {}
    for option in CONNECTION_ARG_SPEC:
        value = _param_value(params, option)
        if value is None:
            value = _proxy_headers_from_env(env) if option == "proxy_headers" else _env_value(option, env)
        resolved[option] = _normalise(option, value)
    return resolved


def _param_value(params: Mapping[str, Any], option: str) -> Any:
    for name in [option, *CONNECTION_ARG_SPEC[option].get("aliases", [])]:
        value = params.get(name)
        if value is not None and value != "":
            return value
    return None


def _env_value(option: str, env: Mapping[str, str]) -> Optional[str]:
    for variable in CONNECTION_ENV_VARS.get(option, ()):
        if env.get(variable):
            return env[variable]
    return None


def _proxy_headers_from_env(env: Mapping[str, str]) -> Optional[dict]:
    headers = {key: env[PROXY_HEADERS_ENV_PREFIX + key.upper()]
               for key in PROXY_HEADERS_SPEC if env.get(PROXY_HEADERS_ENV_PREFIX + key.upper())}
    return headers or None


def _normalise(option: str, value: Any) -> Any:
    if value is None:
        return None
    if option in _BOOL_OPTIONS:
        return _to_bool(value)
    if option == "host":
        return str(value).rstrip("/")
    if option == "impersonate_groups":
        return _to_list(value) or None
    if option == "proxy_headers":
        headers = {key: val for key, val in dict(value).items() if val is not None}
        return headers or None
    if option in _PATH_OPTIONS:
        return os.path.expanduser(str(value))
    return value


def _to_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in FALSE_STRINGS
    return bool(value)


def _to_list(value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    return [str(item).strip() for item in items if str(item).strip()]


# ---- configuration ----------------------------------------------------------------------------------------------


def build_api_client(
    params: Mapping[str, Any], *, env: Optional[Mapping[str, str]] = None
) -> kubernetes.client.ApiClient:
    """An ApiClient for the cluster the options point at, with impersonation headers set. ``env`` (default
    os.environ) supplies the K8S_AUTH_* fallbacks and KUBECONFIG."""
    _require_kubernetes()
    env = os.environ if env is None else env
    connection = resolve_connection(params, env)
    _check_impersonation(connection)
    api_client = kubernetes.client.ApiClient(build_configuration(connection, env=env))
    api_client.user_agent = USER_AGENT
    _set_impersonation_headers(api_client, connection)
    return api_client


def build_configuration(connection: Mapping[str, Any], *, env: Optional[Mapping[str, str]] = None) -> Any:
    """A fresh ``kubernetes.client.Configuration`` from resolved options (see ``resolve_connection``)."""
    _require_kubernetes()
    env = os.environ if env is None else env
    configuration = kubernetes.client.Configuration()
    # kubernetes.core documents that HTTP(S)_PROXY/NO_PROXY are not read (only proxy/no_proxy); newer clients read
    # them in Configuration(), so clear them. A kubeconfig proxy-url still applies: it is loaded after this.
    configuration.proxy = None
    configuration.no_proxy = None
    _load_base_configuration(connection, configuration, env)
    _apply_explicit_options(connection, configuration)
    return configuration


def _require_kubernetes() -> None:
    if not HAS_KUBERNETES:
        raise ClusterConnectionError(
            "the Python library 'kubernetes' (and its dependencies urllib3, PyYAML) is required to connect to a "
            f"cluster: install it on the control node / execution environment. Import error: {KUBERNETES_IMPORT_ERROR}"
        )


def _has_direct_credentials(connection: Mapping[str, Any]) -> bool:
    def given(*names: str) -> bool:
        return all(connection.get(name) for name in names)

    return given("host", "api_key") or given("host", "username", "password") or given(
        "host", "client_cert", "client_key"
    )


def _load_base_configuration(connection: Mapping[str, Any], configuration: Any, env: Mapping[str, str]) -> None:
    if _has_direct_credentials(connection):
        return
    if connection.get("kubeconfig") or connection.get("context"):
        _load_kubeconfig(connection, configuration, env)
        return
    if _load_in_cluster(configuration):
        return
    if _existing_paths(_default_kubeconfig_paths(env)):
        _load_kubeconfig(connection, configuration, env)
        return
    if connection.get("host"):
        return  # a host alone: anonymous access (or credentials added by explicit options)
    raise ClusterConnectionError(
        f"no cluster connection settings: {_SETTINGS_HINT}. There is no in-cluster service account and no "
        f"default kubeconfig ({env.get('KUBECONFIG') or DEFAULT_KUBECONFIG})"
    )


def _load_in_cluster(configuration: Any) -> bool:
    try:
        kubernetes.config.load_incluster_config(client_configuration=configuration)
    except ConfigException:
        return False
    return True


def _apply_explicit_options(connection: Mapping[str, Any], configuration: Any) -> None:
    if connection.get("host"):
        configuration.host = connection["host"]
    _apply_credentials(connection, configuration)
    if connection.get("validate_certs") is not None:
        configuration.verify_ssl = connection["validate_certs"]
        if not connection["validate_certs"]:
            # the user chose not to verify: one warning per request would drown the task output
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    for option, attribute in (("ca_cert", "ssl_ca_cert"), ("client_cert", "cert_file"), ("client_key", "key_file")):
        if connection.get(option):
            setattr(configuration, attribute, _existing_file(option, connection[option]))
    if connection.get("ca_cert") and hasattr(configuration, "ca_cert_data"):
        configuration.ca_cert_data = None  # an explicit CA replaces, not adds to, the kubeconfig's
    if connection.get("proxy"):
        configuration.proxy = connection["proxy"]
    if connection.get("no_proxy"):
        configuration.no_proxy = connection["no_proxy"]
    if connection.get("proxy_headers"):
        configuration.proxy_headers = urllib3.util.make_headers(**connection["proxy_headers"])


def _apply_credentials(connection: Mapping[str, Any], configuration: Any) -> None:
    """api_key, else username/password, replace whatever the kubeconfig gave (including its token refresh hook,
    which would otherwise put the kubeconfig token back before each request)."""
    if connection.get("api_key"):
        authorization = f"Bearer {connection['api_key']}"
    elif connection.get("username") and connection.get("password"):
        basic = urllib3.util.make_headers(basic_auth=f"{connection['username']}:{connection['password']}")
        authorization = basic["authorization"]
        configuration.username, configuration.password = connection["username"], connection["password"]
    else:
        return
    configuration.api_key = {"authorization": authorization}
    configuration.api_key_prefix = {}
    configuration.refresh_api_key_hook = None


def _existing_file(option: str, path: str) -> str:
    if not os.path.isfile(path):
        raise ClusterConnectionError(f"{option}: file {path!r} does not exist (option {option} or its env variable "
                                     f"{CONNECTION_ENV_VARS[option][0]})")
    return path


# ---- kubeconfig -------------------------------------------------------------------------------------------------


def _load_kubeconfig(connection: Mapping[str, Any], configuration: Any, env: Mapping[str, str]) -> None:
    kubeconfig = connection.get("kubeconfig")
    context = connection.get("context")
    if isinstance(kubeconfig, dict):
        _check_context([kubeconfig], context, "the kubeconfig given as a dict")
        _call_loader(kubernetes.config.load_kube_config_from_dict, "the kubeconfig given as a dict", context,
                     config_dict=kubeconfig, client_configuration=configuration, persist_config=False)
        return
    paths = _kubeconfig_paths(kubeconfig, context, env)
    source = ENV_KUBECONFIG_PATH_SEPARATOR.join(paths)
    _check_context([_read_kubeconfig(path) for path in paths], context, f"kubeconfig {source}")
    _call_loader(kubernetes.config.load_kube_config, f"kubeconfig {source}", context, config_file=source,
                 client_configuration=configuration, persist_config=bool(connection.get("persist_config")))


def _kubeconfig_paths(kubeconfig: Any, context: Optional[str], env: Mapping[str, str]) -> list[str]:
    """The files to load. Given explicitly, every file must exist; the default ($KUBECONFIG, as kubectl does)
    skips missing files but needs at least one."""
    if kubeconfig is None:
        paths = _existing_paths(_default_kubeconfig_paths(env))
        if not paths:
            raise ClusterConnectionError(
                f"context {context!r} was given but there is no kubeconfig to find it in: "
                f"{env.get('KUBECONFIG') or DEFAULT_KUBECONFIG} does not exist; set kubeconfig (K8S_AUTH_KUBECONFIG)"
            )
        return paths
    if not isinstance(kubeconfig, str):
        raise ClusterConnectionError(
            f"kubeconfig must be a file path (several joined with {ENV_KUBECONFIG_PATH_SEPARATOR!r}) or a dict, "
            f"got {type(kubeconfig).__name__}"
        )
    paths = _split_paths(kubeconfig)
    missing = [path for path in paths if not os.path.isfile(path)]
    if missing or not paths:
        raise ClusterConnectionError(
            f"kubeconfig: file(s) not found: {', '.join(missing) or repr(kubeconfig)}; "
            "fix the kubeconfig option (or K8S_AUTH_KUBECONFIG)"
        )
    return paths


def _default_kubeconfig_paths(env: Mapping[str, str]) -> list[str]:
    return _split_paths(env.get("KUBECONFIG") or DEFAULT_KUBECONFIG)


def _split_paths(value: str) -> list[str]:
    return [os.path.expanduser(part) for part in value.split(ENV_KUBECONFIG_PATH_SEPARATOR) if part.strip()]


def _existing_paths(paths: Sequence[str]) -> list[str]:
    return [path for path in paths if os.path.isfile(path)]


def _read_kubeconfig(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except OSError as exc:
        raise ClusterConnectionError(f"kubeconfig {path}: cannot be read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ClusterConnectionError(f"kubeconfig {path}: invalid YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise ClusterConnectionError(f"kubeconfig {path}: expected a kubeconfig mapping, got an empty or other file")
    return document


def _check_context(documents: Sequence[Mapping[str, Any]], context: Optional[str], source: str) -> None:
    """Fail early, naming the contexts that exist, rather than with the library's 'Expected object with name'."""
    names: list[str] = []
    current = None
    for document in documents:
        for entry in document.get("contexts") or []:
            if isinstance(entry, Mapping) and entry.get("name") and entry["name"] not in names:
                names.append(entry["name"])
        current = document.get("current-context") or current
    available = ", ".join(names) or "(none)"
    if context is not None and context not in names:
        raise ClusterConnectionError(
            f"context {context!r} not found in {source}; available contexts: {available}. "
            "Fix the context option (or K8S_AUTH_CONTEXT)"
        )
    if context is None and not current:
        raise ClusterConnectionError(
            f"{source} sets no current-context: set context (K8S_AUTH_CONTEXT) to one of: {available}"
        )


def _call_loader(loader: Any, source: str, context: Optional[str], **kwargs: Any) -> None:
    try:
        loader(context=context, **kwargs)
    except (ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
        where = f"{source}, context {context!r}" if context else source
        raise ClusterConnectionError(f"cannot load {where}: {exc}") from exc


# ---- impersonation ----------------------------------------------------------------------------------------------


def _check_impersonation(connection: Mapping[str, Any]) -> None:
    if connection.get("impersonate_groups") and not connection.get("impersonate_user"):
        raise ClusterConnectionError(
            "impersonate_groups needs impersonate_user (K8S_AUTH_IMPERSONATE_USER): the API server refuses "
            "group impersonation without a user"
        )


def _set_impersonation_headers(api_client: Any, connection: Mapping[str, Any]) -> None:
    if connection.get("impersonate_user"):
        api_client.set_default_header("Impersonate-User", connection["impersonate_user"])
    if connection.get("impersonate_groups"):
        _send_repeated_header(api_client, "Impersonate-Group", connection["impersonate_groups"])


def _send_repeated_header(api_client: Any, name: str, values: Sequence[str]) -> None:
    """Send ``name`` once per value. The API server reads every Impersonate-Group line as one group, so a single
    comma-joined header would mean one group named "a,b". The client's default headers are a plain dict (one value
    per name), so the header lines are added where the request reaches urllib3, whose HTTPHeaderDict sends each
    value on its own line."""
    pool_manager = api_client.rest_client.pool_manager
    send = pool_manager.request

    def request_with_repeated_header(method: str, url: str, *args: Any, headers: Any = None, **kwargs: Any) -> Any:
        merged = HTTPHeaderDict(headers or {})
        merged.discard(name)
        for value in values:
            merged.add(name, value)
        return send(method, url, *args, headers=merged, **kwargs)

    pool_manager.request = request_with_repeated_header
    api_client.impersonate_groups = list(values)  # visible to callers and tests; the dict above cannot hold them
