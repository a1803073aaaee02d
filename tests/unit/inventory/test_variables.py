"""The inventory checks the roles run first: unknown variables with a did-you-mean, and whether a cluster is named."""

from __future__ import annotations

from ansible_collections.descheduler.fleet.plugins.module_utils.inventory.variables import (
    describe_unknown,
    names_a_cluster,
    unknown_variables,
)

KNOWN = ["dry_run_snapshot", "dry_run_policy", "dry_run_result", "dry_run_results"]


def test_misspelt_names_of_both_prefixes_are_found_with_the_closest_known_name() -> None:
    names = ["descheduler_fleet_conection", "dry_run_snapshots", "dry_run_policy", "descheduler_fleet_connection",
             "evict_confirm", "_dry_run_internal", "inventory_hostname", "dry_run_zzz"]
    assert unknown_variables(names, "dry_run", KNOWN) == [
        ("descheduler_fleet_conection", "descheduler_fleet_connection"),
        ("dry_run_snapshots", "dry_run_snapshot"),
        ("dry_run_zzz", None)]


def test_another_roles_variables_are_not_this_roles_business() -> None:
    assert unknown_variables(["evict_report_dir", "install_flavor", "uninstall_flavor"], "install",
                             ["install_flavor"]) == []


def test_the_message_names_the_host_the_role_and_each_variable() -> None:
    message = describe_unknown([("dry_run_snapshots", "dry_run_snapshot"), ("dry_run_zzz", None)], "dry_run", "c1")
    assert message.startswith("c1: unknown variable(s) for role descheduler.fleet.dry_run: dry_run_snapshots (did "
                              "you mean dry_run_snapshot?), dry_run_zzz. ")
    assert "ansible-doc -t role descheduler.fleet.dry_run" in message


def test_a_cluster_is_named_by_kubeconfig_context_or_host_or_their_environment_variables() -> None:
    assert not names_a_cluster({"api_key": "t", "validate_certs": False}, {"KUBECONFIG": "/k"})
    assert names_a_cluster({"context": "prod"}, {})
    assert names_a_cluster({"host": "https://api:6443"}, {})
    assert names_a_cluster({}, {"K8S_AUTH_KUBECONFIG": "/k"})
    assert not names_a_cluster({"kubeconfig": ""}, {"K8S_AUTH_HOST": ""})
