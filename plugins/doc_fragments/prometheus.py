"""Documentation of the Prometheus connection options (module_utils/cluster/args.py PROMETHEUS_ARG_SPEC).

Use it with ``extends_documentation_fragment: [descheduler.fleet.prometheus]``; each module documents
``prometheus_url`` itself, since what it defaults to differs.
"""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  prometheus_token:
    description:
      - Bearer token for Prometheus. Without it, the Secret in O(prometheus_token_secret) (or the policy's
        C(authToken.secretReference)), else the cluster connection's own token, is used.
      - This value is not logged (C(no_log)).
    type: str
  prometheus_token_secret:
    description:
      - A Secret holding the Prometheus token under key C(prometheusAuthToken), as upstream's
        C(authToken.secretReference).
    type: dict
    suboptions:
      namespace:
        description: Namespace of the Secret.
        type: str
        required: true
      name:
        description: Name of the Secret.
        type: str
        required: true
  prometheus_ca_cert:
    description: CA bundle to verify Prometheus' TLS certificate with.
    type: path
  prometheus_validate_certs:
    description: Whether to verify Prometheus' TLS certificate.
    type: bool
    default: true
"""
