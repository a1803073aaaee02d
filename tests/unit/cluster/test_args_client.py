"""Connection options: env fallback, kubeconfig/context resolution, credentials and impersonation headers."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.args import CONNECTION_ARG_SPEC
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.client import (
    HAS_KUBERNETES,
    ClusterConnectionError,
    build_api_client,
    build_configuration,
    resolve_connection,
)
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.errors import ClusterApiError
from ansible_collections.descheduler.fleet.plugins.module_utils.cluster.listing import get_raw, resource_path

pytestmark = pytest.mark.skipif(not HAS_KUBERNETES, reason="the kubernetes client library is not installed")

NO_DEFAULT_KUBECONFIG = {"KUBECONFIG": "/nonexistent/kubeconfig"}


def kubeconfig_document(current: str | None = "east") -> dict:
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "east", "cluster": {"server": "https://east.example:6443"}},
            {"name": "west", "cluster": {"server": "https://west.example:6443"}},
        ],
        "users": [
            {"name": "east-admin", "user": {"token": "east-token"}},
            {"name": "west-admin", "user": {"token": "west-token"}},
        ],
        "contexts": [
            {"name": "east", "context": {"cluster": "east", "user": "east-admin"}},
            {"name": "west", "context": {"cluster": "west", "user": "west-admin"}},
        ],
    }
    if current:
        document["current-context"] = current
    return document


@pytest.fixture
def kubeconfig(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig_document()))
    return str(path)


@pytest.fixture(autouse=True)
def not_in_cluster(monkeypatch):
    # the in-cluster loader reads os.environ directly; CI may run inside a pod
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)


def configuration_for(params: dict, env: dict | None = None):
    environment = dict(NO_DEFAULT_KUBECONFIG, **(env or {}))
    return build_configuration(resolve_connection(params, environment), env=environment)


def bearer(configuration) -> str:
    setting = configuration.auth_settings()["BearerToken"]
    assert setting["key"] == "authorization"
    return setting["value"]


# ---- resolve_connection -----------------------------------------------------------------------------------------


def test_every_option_is_resolved_even_when_unset():
    assert resolve_connection({}, {}) == {option: None for option in CONNECTION_ARG_SPEC}


def test_env_variables_fill_unset_options():
    env = {
        "K8S_AUTH_KUBECONFIG": "/tmp/a:/tmp/b",
        "K8S_AUTH_CONTEXT": "west",
        "K8S_AUTH_HOST": "https://api.example:6443/",
        "K8S_AUTH_API_KEY": "tok",
        "K8S_AUTH_USERNAME": "alice",
        "K8S_AUTH_PASSWORD": "secret",
        "K8S_AUTH_SSL_CA_CERT": "/tmp/ca.crt",
        "K8S_AUTH_CERT_FILE": "/tmp/client.crt",
        "K8S_AUTH_KEY_FILE": "/tmp/client.key",
        "K8S_AUTH_PROXY": "http://proxy:3128",
        "K8S_AUTH_NO_PROXY": "localhost,.local",
        "K8S_AUTH_PERSIST_CONFIG": "true",
        "K8S_AUTH_IMPERSONATE_USER": "bob",
        "K8S_AUTH_IMPERSONATE_GROUPS": "ops, admins,,",
        "K8S_AUTH_PROXY_HEADERS_USER_AGENT": "fleet/1.0",
        "K8S_AUTH_PROXY_HEADERS_PROXY_BASIC_AUTH": "u:p",
    }
    resolved = resolve_connection({}, env)
    assert resolved["kubeconfig"] == "/tmp/a:/tmp/b"
    assert resolved["context"] == "west"
    assert resolved["host"] == "https://api.example:6443"  # trailing slash stripped
    assert (resolved["api_key"], resolved["username"], resolved["password"]) == ("tok", "alice", "secret")
    assert (resolved["ca_cert"], resolved["client_cert"], resolved["client_key"]) == (
        "/tmp/ca.crt", "/tmp/client.crt", "/tmp/client.key")
    assert (resolved["proxy"], resolved["no_proxy"]) == ("http://proxy:3128", "localhost,.local")
    assert resolved["persist_config"] is True
    assert resolved["impersonate_user"] == "bob"
    assert resolved["impersonate_groups"] == ["ops", "admins"]
    assert resolved["proxy_headers"] == {"user_agent": "fleet/1.0", "proxy_basic_auth": "u:p"}
    assert resolved["validate_certs"] is None


def test_params_win_over_env():
    env = {"K8S_AUTH_CONTEXT": "west", "K8S_AUTH_VERIFY_SSL": "no", "K8S_AUTH_IMPERSONATE_GROUPS": "x"}
    resolved = resolve_connection({"context": "east", "validate_certs": True, "impersonate_groups": ["a"]}, env)
    assert resolved["context"] == "east"
    assert resolved["validate_certs"] is True
    assert resolved["impersonate_groups"] == ["a"]


@pytest.mark.parametrize("value", ["0", "false", "no", "False", "NO"])
def test_verify_ssl_env_false_strings(value):
    assert resolve_connection({}, {"K8S_AUTH_VERIFY_SSL": value})["validate_certs"] is False


@pytest.mark.parametrize("value", ["1", "true", "yes", "True"])
def test_verify_ssl_env_true_strings(value):
    assert resolve_connection({}, {"K8S_AUTH_VERIFY_SSL": value})["validate_certs"] is True


def test_kubernetes_core_alternative_env_names_are_accepted():
    resolved = resolve_connection({}, {"K8S_AUTH_VALIDATE_CERTS": "no", "K8S_AUTH_CA_CERT": "/ca"})
    assert resolved["validate_certs"] is False
    assert resolved["ca_cert"] == "/ca"


def test_aliases_are_read_when_called_outside_ansible():
    resolved = resolve_connection({"verify_ssl": False, "ssl_ca_cert": "/ca", "cert_file": "/c", "key_file": "/k"}, {})
    assert resolved["validate_certs"] is False
    assert (resolved["ca_cert"], resolved["client_cert"], resolved["client_key"]) == ("/ca", "/c", "/k")


def test_verify_ssl_no_reaches_the_configuration():
    configuration = configuration_for({"host": "https://h:6443", "api_key": "t"}, {"K8S_AUTH_VERIFY_SSL": "no"})
    assert configuration.verify_ssl is False


# ---- kubeconfig and context -------------------------------------------------------------------------------------


@pytest.mark.parametrize("context,host,token", [
    ("east", "https://east.example:6443", "east-token"),
    ("west", "https://west.example:6443", "west-token"),
])
def test_context_selects_cluster_and_user(kubeconfig, context, host, token):
    configuration = configuration_for({"kubeconfig": kubeconfig, "context": context})
    assert configuration.host == host
    assert bearer(configuration) == f"Bearer {token}"


def test_current_context_is_used_without_context(kubeconfig):
    assert configuration_for({"kubeconfig": kubeconfig}).host == "https://east.example:6443"


def test_context_from_env(kubeconfig):
    configuration = configuration_for({}, {"K8S_AUTH_KUBECONFIG": kubeconfig, "K8S_AUTH_CONTEXT": "west"})
    assert configuration.host == "https://west.example:6443"


def test_unknown_context_lists_the_available_ones(kubeconfig):
    with pytest.raises(ClusterConnectionError) as error:
        configuration_for({"kubeconfig": kubeconfig, "context": "north"})
    message = str(error.value)
    assert "'north'" in message and "east, west" in message and "context" in message


def test_missing_kubeconfig_file_is_an_error(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(ClusterConnectionError, match="kubeconfig: file\\(s\\) not found: .*nope"):
        configuration_for({"kubeconfig": missing})


def test_one_missing_file_in_a_path_list_is_an_error(kubeconfig, tmp_path):
    with pytest.raises(ClusterConnectionError, match="not found"):
        configuration_for({"kubeconfig": f"{kubeconfig}:{tmp_path / 'nope'}"})


def test_several_kubeconfig_files_are_merged(tmp_path):
    first, second = kubeconfig_document(), kubeconfig_document(current=None)
    second["clusters"] = [{"name": "south", "cluster": {"server": "https://south.example:6443"}}]
    second["users"] = [{"name": "south-admin", "user": {"token": "south-token"}}]
    second["contexts"] = [{"name": "south", "context": {"cluster": "south", "user": "south-admin"}}]
    (tmp_path / "one").write_text(yaml.safe_dump(first))
    (tmp_path / "two").write_text(yaml.safe_dump(second))
    paths = f"{tmp_path / 'one'}:{tmp_path / 'two'}"
    assert configuration_for({"kubeconfig": paths, "context": "south"}).host == "https://south.example:6443"


def test_kubeconfig_as_a_dict():
    configuration = configuration_for({"kubeconfig": kubeconfig_document(), "context": "west"})
    assert configuration.host == "https://west.example:6443"
    assert bearer(configuration) == "Bearer west-token"


def test_unknown_context_in_a_dict_kubeconfig():
    with pytest.raises(ClusterConnectionError, match="available contexts: east, west"):
        configuration_for({"kubeconfig": kubeconfig_document(), "context": "north"})


def test_no_current_context_asks_for_a_context(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig_document(current=None)))
    with pytest.raises(ClusterConnectionError, match="no current-context.*east, west"):
        configuration_for({"kubeconfig": str(path)})


def test_context_without_any_kubeconfig_does_not_fall_back_silently():
    with pytest.raises(ClusterConnectionError, match="context 'east' was given but there is no kubeconfig"):
        configuration_for({"context": "east"})


def test_nothing_configured_names_the_options_to_set():
    with pytest.raises(ClusterConnectionError) as error:
        configuration_for({})
    assert "kubeconfig (K8S_AUTH_KUBECONFIG)" in str(error.value)
    assert "api_key (K8S_AUTH_API_KEY)" in str(error.value)


def test_default_kubeconfig_from_env_kubeconfig(kubeconfig):
    environment = {"KUBECONFIG": kubeconfig}
    configuration = build_configuration(resolve_connection({}, environment), env=environment)
    assert configuration.host == "https://east.example:6443"


def test_invalid_kubeconfig_yaml(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text("clusters: [unclosed\n")
    with pytest.raises(ClusterConnectionError, match="invalid YAML"):
        configuration_for({"kubeconfig": str(path)})


# ---- explicit options -------------------------------------------------------------------------------------------


def test_host_and_api_key_need_no_kubeconfig():
    configuration = configuration_for({"host": "https://api.example:6443/", "api_key": "tok"})
    assert configuration.host == "https://api.example:6443"
    assert bearer(configuration) == "Bearer tok"


def test_explicit_options_override_the_kubeconfig(kubeconfig):
    configuration = configuration_for({"kubeconfig": kubeconfig, "context": "west", "api_key": "mine",
                                       "validate_certs": False})
    assert configuration.host == "https://west.example:6443"
    assert configuration.verify_ssl is False
    # the kubeconfig's refresh hook must not put its own token back before a request
    assert bearer(configuration) == "Bearer mine"
    assert bearer(configuration) == "Bearer mine"


def test_explicit_host_overrides_the_kubeconfig_server(kubeconfig):
    configuration = configuration_for({"kubeconfig": kubeconfig, "context": "west", "host": "https://other:6443"})
    assert configuration.host == "https://other:6443"
    assert bearer(configuration) == "Bearer west-token"


def test_username_and_password_become_basic_auth():
    configuration = configuration_for({"host": "https://h:6443", "username": "alice", "password": "secret"})
    assert bearer(configuration) == "Basic YWxpY2U6c2VjcmV0"


def test_missing_ca_cert_names_the_option():
    with pytest.raises(ClusterConnectionError, match="ca_cert: file '/nonexistent/ca.crt' does not exist"):
        configuration_for({"host": "https://h:6443", "api_key": "t", "ca_cert": "/nonexistent/ca.crt"})


def test_client_cert_and_key_files(tmp_path):
    cert, key = tmp_path / "c.crt", tmp_path / "c.key"
    cert.write_text("cert")
    key.write_text("key")
    configuration = configuration_for({"host": "https://h:6443", "client_cert": str(cert), "client_key": str(key)})
    assert (configuration.cert_file, configuration.key_file) == (str(cert), str(key))


def test_environment_proxies_are_ignored(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://env-proxy:3128")
    monkeypatch.setenv("https_proxy", "http://env-proxy:3128")
    configuration = configuration_for({"host": "https://h:6443", "api_key": "t"})
    assert configuration.proxy is None


def test_proxy_options():
    configuration = configuration_for({
        "host": "https://h:6443", "api_key": "t", "proxy": "http://proxy:3128", "no_proxy": "10.0.0.0/8",
        "proxy_headers": {"proxy_basic_auth": "u:p", "user_agent": "fleet/1", "basic_auth": None},
    })
    assert configuration.proxy == "http://proxy:3128"
    assert configuration.no_proxy == "10.0.0.0/8"
    assert configuration.proxy_headers["proxy-authorization"] == "Basic dTpw"
    assert configuration.proxy_headers["user-agent"] == "fleet/1"


def test_impersonate_groups_need_a_user():
    with pytest.raises(ClusterConnectionError, match="impersonate_groups needs impersonate_user"):
        build_api_client({"host": "https://h:6443", "api_key": "t", "impersonate_groups": ["ops"]},
                         env=NO_DEFAULT_KUBECONFIG)


# ---- headers on the wire ----------------------------------------------------------------------------------------


class _RecordingHandler(BaseHTTPRequestHandler):
    """Answers every GET with an empty list and remembers the request headers (all lines, duplicates too)."""

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.requests.append((self.path, self.headers.items()))
        status, body = (404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                              "message": "the server could not find the requested resource", "details": {},
                              "code": 404}) if "missing" in self.path else (200, {"kind": "NamespaceList",
                                                                                  "apiVersion": "v1", "items": []})
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def recording_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RecordingHandler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def header_values(headers, name):
    return [value for key, value in headers if key.lower() == name.lower()]


def test_impersonation_and_bearer_headers_on_the_wire(recording_server):
    host = f"http://127.0.0.1:{recording_server.server_address[1]}"
    api_client = build_api_client({"host": host, "api_key": "tok", "impersonate_user": "alice",
                                   "impersonate_groups": ["ops", "system:authenticated"]}, env=NO_DEFAULT_KUBECONFIG)
    assert get_raw(api_client, resource_path("v1", "namespaces")) == {"kind": "NamespaceList", "apiVersion": "v1",
                                                                      "items": []}
    path, headers = recording_server.requests[-1]
    assert path == "/api/v1/namespaces"
    assert header_values(headers, "Authorization") == ["Bearer tok"]
    assert header_values(headers, "Impersonate-User") == ["alice"]
    # one header line per group: a comma-joined value would be read as a single group
    assert header_values(headers, "Impersonate-Group") == ["ops", "system:authenticated"]


def test_impersonation_from_env(recording_server):
    host = f"http://127.0.0.1:{recording_server.server_address[1]}"
    env = dict(NO_DEFAULT_KUBECONFIG, K8S_AUTH_HOST=host, K8S_AUTH_API_KEY="tok",
               K8S_AUTH_IMPERSONATE_USER="bob", K8S_AUTH_IMPERSONATE_GROUPS="a,b,c")
    get_raw(build_api_client({}, env=env), "/api/v1/namespaces")
    _path, headers = recording_server.requests[-1]
    assert header_values(headers, "Impersonate-User") == ["bob"]
    assert header_values(headers, "Impersonate-Group") == ["a", "b", "c"]


def test_get_raw_returns_none_on_404(recording_server):
    host = f"http://127.0.0.1:{recording_server.server_address[1]}"
    api_client = build_api_client({"host": host, "api_key": "tok"}, env=NO_DEFAULT_KUBECONFIG)
    assert get_raw(api_client, "/api/v1/namespaces/missing") is None


def test_unreachable_host_is_described():
    api_client = build_api_client({"host": "http://127.0.0.1:9", "api_key": "tok"}, env=NO_DEFAULT_KUBECONFIG)
    api_client.configuration.retries = 0
    api_client.rest_client.pool_manager.connection_pool_kw["retries"] = 0
    with pytest.raises(ClusterApiError) as error:
        get_raw(api_client, "/api/v1/namespaces", timeout=(2, 2))
    assert error.value.status == 0
    assert error.value.describe().startswith("cannot reach http://127.0.0.1:9:")
