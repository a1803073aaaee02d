"""Documentation of the cluster connection options (module_utils/cluster/args.py CONNECTION_ARG_SPEC).

Use it with ``extends_documentation_fragment: [descheduler.fleet.connection]``. The options, types, aliases and
environment variables are those of kubernetes.core's ``k8s_auth_options``, so the same ``module_defaults`` and
AWX/AAP credentials work for both collections.
"""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  host:
    description:
      - URL of the Kubernetes API server, for example C(https://api.cluster.example:6443).
      - Can also be set with the E(K8S_AUTH_HOST) environment variable.
      - With O(api_key), O(username)/O(password) or O(client_cert)/O(client_key), no kubeconfig is read.
        It also overrides the server of the kubeconfig context.
    type: str
  api_key:
    description:
      - "Bearer token used to authenticate with the API (sent as C(Authorization: Bearer <token>))."
      - Can also be set with the E(K8S_AUTH_API_KEY) environment variable.
      - This value is not logged (C(no_log)).
    type: str
  kubeconfig:
    description:
      - Path to a Kubernetes config file, or several paths joined with C(:) (C(;) on Windows), or the content of a
        kubeconfig as a dictionary.
      - Can also be set with the E(K8S_AUTH_KUBECONFIG) environment variable.
      - When neither O(kubeconfig), O(context) nor O(host) with credentials is given, the in-cluster service account
        is used if there is one, else the default kubeconfig (E(KUBECONFIG) or C(~/.kube/config)).
      - A kubeconfig file that does not exist is an error; it never falls back to another configuration.
    type: raw
  context:
    description:
      - Name of the context to use from the kubeconfig. Without it, the kubeconfig's C(current-context) is used.
      - Can also be set with the E(K8S_AUTH_CONTEXT) environment variable.
      - A context the kubeconfig does not define is an error that lists the contexts it does define.
    type: str
  username:
    description:
      - User name for HTTP basic authentication with the API.
      - Can also be set with the E(K8S_AUTH_USERNAME) environment variable.
      - Only for clusters that accept HTTP basic authentication. For OpenShift OAuth, obtain a token first (for example
        with M(community.okd.k8s_auth)) and pass it as O(api_key).
    type: str
  password:
    description:
      - Password for HTTP basic authentication with the API; see O(username).
      - Can also be set with the E(K8S_AUTH_PASSWORD) environment variable.
      - This value is not logged (C(no_log)).
    type: str
  client_cert:
    description:
      - Path to a client certificate used to authenticate with the API.
      - Can also be set with the E(K8S_AUTH_CERT_FILE) environment variable.
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the private key of O(client_cert).
      - Can also be set with the E(K8S_AUTH_KEY_FILE) environment variable.
    type: path
    aliases: [key_file]
  ca_cert:
    description:
      - Path to the CA certificate used to verify the API server. Give the full certificate chain, or validation fails.
      - Can also be set with the E(K8S_AUTH_SSL_CA_CERT) environment variable.
    type: path
    aliases: [ssl_ca_cert]
  validate_certs:
    description:
      - Whether to verify the API server's TLS certificate.
      - Can also be set with the E(K8S_AUTH_VERIFY_SSL) environment variable, where C(0), C(false) and C(no) mean
        false.
    type: bool
    aliases: [verify_ssl]
  proxy:
    description:
      - URL of an HTTP proxy to reach the API server through.
      - Can also be set with the E(K8S_AUTH_PROXY) environment variable.
      - The usual proxy environment variables (E(HTTP_PROXY), E(HTTPS_PROXY)) are not read.
    type: str
  no_proxy:
    description:
      - Comma-separated hosts, domains, IP addresses or CIDR ranges to reach without the proxy, for example
        C(localhost,.local,.example.com,127.0.0.1,10.0.0.0/8).
      - Can also be set with the E(K8S_AUTH_NO_PROXY) environment variable.
      - The E(NO_PROXY) environment variable is not read.
    type: str
  proxy_headers:
    description:
      - Headers sent to the HTTP proxy, built with urllib3's C(make_headers).
    type: dict
    suboptions:
      proxy_basic_auth:
        description:
          - C(username:password) for the proxy's basic authentication (C(Proxy-Authorization) header).
          - Can also be set with the E(K8S_AUTH_PROXY_HEADERS_PROXY_BASIC_AUTH) environment variable.
          - This value is not logged (C(no_log)).
        type: str
      basic_auth:
        description:
          - C(username:password) for a basic C(Authorization) header.
          - Can also be set with the E(K8S_AUTH_PROXY_HEADERS_BASIC_AUTH) environment variable.
          - This value is not logged (C(no_log)).
        type: str
      user_agent:
        description:
          - User agent sent to the proxy, for example C(fleet/1.0).
          - Can also be set with the E(K8S_AUTH_PROXY_HEADERS_USER_AGENT) environment variable.
        type: str
  persist_config:
    description:
      - Whether to write refreshed credentials (for example OIDC or gcloud refresh tokens) back to the kubeconfig
        file. Without it, a refreshed token is used but not saved, and the saved one can expire.
      - Can also be set with the E(K8S_AUTH_PERSIST_CONFIG) environment variable.
      - Defaults to false.
    type: bool
  impersonate_user:
    description:
      - User to impersonate for every request (C(Impersonate-User) header). The connecting user needs the
        C(impersonate) permission.
      - Can also be set with the E(K8S_AUTH_IMPERSONATE_USER) environment variable.
    type: str
  impersonate_groups:
    description:
      - Groups to impersonate, one C(Impersonate-Group) header each. Needs O(impersonate_user).
      - "Can also be set with the E(K8S_AUTH_IMPERSONATE_GROUPS) environment variable, as a comma-separated list:
        C(group1,group2)."
    type: list
    elements: str
notes:
  - To avoid certificate validation errors when O(validate_certs) is true, the API server's full certificate chain
    must be given with O(ca_cert) or in the kubeconfig.
  - An explicit option overrides the same setting loaded from the kubeconfig or the in-cluster configuration.
requirements:
  - kubernetes >= 31.0.0 (Python library)
  - PyYAML
"""
