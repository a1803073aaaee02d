"""A first end-to-end check of compute_plan on a tiny cluster."""

from ansible_collections.descheduler.fleet.plugins.module_utils.engine.plan import compute_plan
from builders import build_node, build_pod, evicted_names, policy, set_rs_owner

NOW = "2026-11-22T12:00:00Z"


def test_too_many_restarts_evicts_only_the_pod_over_threshold():
    nodes = [build_node("n1", 2000, 4 * 10**9, 10), build_node("n2", 2000, 4 * 10**9, 10)]

    def restarted(count):
        def apply(pod):
            set_rs_owner(pod)
            pod["status"]["containerStatuses"] = [{"name": "c", "restartCount": count}]
        return apply

    pods = [build_pod("many", 100, 100, "n1", restarted(150)), build_pod("few", 100, 100, "n1", restarted(3))]
    restarts_policy = policy(("RemovePodsHavingTooManyRestarts", "deschedule", {"podRestartThreshold": 100}))
    plan = compute_plan(nodes + pods, restarts_policy, NOW)
    assert evicted_names(plan) == ["many"]
    assert plan["evictions"][0]["reason"] == "restarts 150 ≥ threshold 100"
    assert plan["summary"]["by_plugin"] == {"RemovePodsHavingTooManyRestarts": 1}


def test_a_pod_without_uid_is_never_evicted_and_the_plan_says_why():
    nodes = [build_node("n1", 2000, 4 * 10**9, 10), build_node("n2", 2000, 4 * 10**9, 10)]

    def restarted(pod):
        set_rs_owner(pod)
        pod["status"]["containerStatuses"] = [{"name": "c", "restartCount": 500}]

    pod = build_pod("no-uid", 100, 100, "n1", restarted)
    del pod["metadata"]["uid"]
    restarts_policy = policy(("RemovePodsHavingTooManyRestarts", "deschedule", {"podRestartThreshold": 100}))
    plan = compute_plan(nodes + [pod], restarts_policy, NOW)
    assert plan["evictions"] == []
    reasons = plan["spared"]["by_reason"]
    uid_reasons = [r for r in reasons if "metadata.uid" in r]
    assert uid_reasons and reasons[uid_reasons[0]]["examples"] == ["default/no-uid"]
