#!/usr/bin/python
# Copyright: (c) 2026, descheduler.fleet contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: plan
short_description: Simulate one descheduler cycle and return the evictions it would perform
version_added: 0.1.0
description:
  - Computes, from a cluster's objects and a descheduler policy, exactly the evictions the kubernetes-sigs
    descheduler would perform in one C(--dry-run) cycle, with the plugin and profile of each, a human reason,
    the pods that were considered and spared (with why), and node utilization before and after.
  - The cluster is either read live (nodes, pods, namespaces, priority classes, PodDisruptionBudgets and
    PersistentVolumeClaims, each listed once in pages as raw JSON) or taken from a snapshot file.
  - The policy is a C(descheduler/v1alpha2) DeschedulerPolicy, the spec of an OpenShift C(KubeDescheduler)
    (translated as the Kube Descheduler Operator renders it), or read from the live cluster.
  - With O(report_dir), writes the plan there as C(plan.json), C(plan.md) and a self-contained C(plan.html) with a
    before/after utilization chart per node.
  - Never changes the cluster.
author:
  - descheduler.fleet maintainers (@descheduler-fleet)
extends_documentation_fragment:
  - descheduler.fleet.attributes
  - descheduler.fleet.connection
  - descheduler.fleet.prometheus
  - descheduler.fleet.field_validation
  - descheduler.fleet.listing
  - descheduler.fleet.report
attributes:
  check_mode:
    support: full
    details: Returns the same plan; it only reads the cluster. Report files, when asked for, are written in check
      mode too.
  diff_mode:
    support: none
    details: Nothing is changed, so there is no diff.
options:
  snapshot:
    description:
      - Path to a JSON or YAML file holding the cluster's objects instead of reading a live cluster.
      - "A JSON/YAML list, a C(kind: List) document as C(kubectl get -o yaml) writes, or multi-document YAML;
        a name ending in C(.gz) is read as gzip."
      - When unset, the cluster given by the connection options is read.
    type: path
  policy:
    description:
      - A C(descheduler/v1alpha2) C(DeschedulerPolicy) to simulate.
      - Mutually exclusive with O(kubedescheduler).
    type: dict
  kubedescheduler:
    description:
      - The spec of an OpenShift C(KubeDescheduler) (C(operator.openshift.io/v1)), or the whole object.
      - It is translated to the DeschedulerPolicy the Kube Descheduler Operator would render, with its protected
        namespaces taken from the namespaces of the cluster.
      - Mutually exclusive with O(policy).
      - Fields C(operator.openshift.io/v1) does not have are refused (see O(field_validation)).
    type: dict
  previous_plan:
    description:
      - The path of this cluster's plan from an earlier run (its C(plan.json), for example in O(report_dir)). The
        result then has RV(since_previous) - the evictions new, gone and moved to another plugin, and the drift of
        the nodes' requested share. A path that does not exist yet (the first run) gives C(since_previous=null).
      - Read before the report of this run is written, so it may be the same file.
    type: path
  fail_on:
    description:
      - Fail the task (after the reports are written) when the plan finds one of these. Each is always an Ansible
        warning and an entry of RV(plan_warnings); this makes it an error.
      - C(cycle_skipped) - the descheduler would skip the cycle and evict nothing, because fewer than 2 ready nodes
        (of those the policy's C(nodeSelector) picks) are in the input (an empty or node-less snapshot, say).
      - C(plugin_error) - a plugin reported an error and evicts nothing (for example a load-aware plugin without
        its metrics). The descheduler goes on with the other plugins, and so does the plan.
      - C(warning) - any warning of the plan.
    type: list
    elements: str
    choices: [cycle_skipped, plugin_error, warning]
    default: []
  policy_source:
    description:
      - Where to read the policy from a live cluster when neither O(policy) nor O(kubedescheduler) is given.
      - C(auto) takes the policy the operator rendered (ConfigMap C(cluster) in
        C(openshift-kube-descheduler-operator)), else the C(KubeDescheduler) C(cluster) spec, else the
        ConfigMap named by O(policy_configmap).
      - C(kubedescheduler) always translates the C(KubeDescheduler) C(cluster) spec.
      - C(configmap) reads only O(policy_configmap).
    type: str
    choices: [auto, kubedescheduler, configmap]
    default: auto
  policy_configmap:
    description:
      - The ConfigMap an upstream descheduler deployment reads its policy from.
    type: dict
    suboptions:
      namespace:
        description: Namespace of the ConfigMap.
        type: str
        default: kube-system
      name:
        description: Name of the ConfigMap.
        type: str
        default: descheduler
      key:
        description: Key holding the policy YAML.
        type: str
        default: policy.yaml
  now:
    description:
      - The time to treat as now, in RFC 3339 (for example C(2026-11-22T12:00:00Z)).
      - Pod ages (PodLifeTime, RemoveFailedPods, minPodAge) are computed against it. Defaults to the current time.
    type: str
  prometheus_url:
    description:
      - Prometheus URL written into a translated KubeDescheduler policy that needs one. Without it, reading a live
        cluster, C(https://) and the admitted host (C(status.ingress[0].host)) of the route
        C(openshift-monitoring/prometheus-k8s), as the operator builds it; offline, or without that route, a
        placeholder ending in C(.invalid).
      - Also where a C(LowNodeUtilization) with C(metricsUtilization.source=Prometheus) is queried live (an instant
        query at O(now), as upstream sends it) when O(prometheus_result) does not answer its query. Reading a live
        cluster without it, the C(openshift-monitoring/prometheus-k8s) route, else the policy's
        C(metricsProviders) URL, is used. An offline plan (O(snapshot)) never queries Prometheus unless this is set.
      - "Volcano's C(LoadAware) with C(metrics.type=prometheus): the per-node and per-pod queries Volcano sends that
        O(prometheus_result) does not answer are sent to this URL, else to its C(metrics.address) (a live cluster
        only), at O(now). Volcano sends no token: only O(prometheus_token) or O(prometheus_token_secret) is sent, never
        the connection's own token. An unreachable or unauthorised Prometheus is asked once; a warning in
        RV(plan_warnings) names it and the nodes left without data (Volcano counts them as 0% used)."
      - Queries are sent as a form C(POST /api/v1/query), then as C(GET) when the server answers 405 or 501, as
        Prometheus' own Go client does.
    type: str
  prometheus_result:
    description:
      - Recorded Prometheus answers, so a plan with Prometheus utilization can be reproduced offline.
      - "The JSON body C(/api/v1/query) returned (C({status, data: {resultType: vector, result: [...]}}), it then
        answers every query), a mapping of query to such a body, or the path of a JSON file holding either."
      - Each sample's C(instance) label must be a node name and its value a fraction in [0, 1], as upstream reads it.
    type: raw

  metrics_file:
    description:
      - A file of C(NodeMetrics) and C(PodMetrics) objects (C(metrics.k8s.io/v1beta1), as the API returns them and
        M(descheduler.fleet.metrics_record) writes them) added to the O(snapshot). The snapshot itself may also
        carry them.
      - Reading a live cluster, they are listed from the metrics API when a C(LowNodeUtilization) uses
        C(KubernetesMetrics) (or C(metricsServer)).
    type: path
  samples:
    description:
      - How many descheduling cycles to simulate. The real descheduler walks nodes, pods and several internal maps
        in an unspecified order, and a plugin may or may not still see the pods an earlier plugin evicted in the same
        cycle, so on an unchanged cluster it may evict different pods from cycle to cycle.
      - With C(1) (the default) the plan is one deterministic cycle, as always.
      - With N > 1 the plan stays that deterministic cycle, and N-1 more cycles are simulated in orders the
        descheduler could use; each eviction then carries C(frequency) (the share of the N cycles that evicted the
        pod), C(frequency_bounds) (its 95% Wilson score interval) and C(likelihood) - C(certain) when the interval's
        lower end is at least 0.9, C(likely) when not but the frequency is at least 0.5, else C(possible) - and
        RV(sampling) gives the spread of counts and the other pods some cycles evicted.
      - An eviction every cycle makes is certain from N = 35 (40 advised); with fewer samples nothing is certain by
        evidence. A plan whose cycle no order can change (plugins that decide per pod - C(PodLifeTime),
        C(RemovePodsHavingTooManyRestarts), C(RemovePodsViolatingNodeTaints), C(RemoveFailedPods) - no eviction
        limit refusing a pod, no C(nodeFit) or C(minReplicas)) has exact frequencies, certain from N = 2.
    type: int
    default: 1
  seed:
    description:
      - Seed of the sampled orders (with O(samples) > 1); the same seed, cluster, policy and time give the same
        frequencies. Defaults to C(0).
    type: int
  placement:
    description:
      - Preview where the evicted pods' replacements land. After the planned evictions, each replacement (a copy of
        the evicted pod, as its ReplicaSet, StatefulSet, ReplicationController or Job recreates it) is scheduled
        one at a time in eviction order with the kube-scheduler's filters and scores, by the profile its
        C(schedulerName) names (the default profile, or one of O(scheduler_config)). A bare pod is not replaced; a
        DaemonSet pod comes back to its node.
      - Each eviction then has C(placement) and the plan has RV(placement); per node, the utilization after
        placement is added to RV(utilization). Off by default (the plan and its speed stay as they were).
      - A live plan with placement also lists PersistentVolumes (cluster scope, verb C(list)), as a replacement's bound
        claims keep it on the nodes and zones its volumes allow (C(VolumeBinding), C(VolumeZone)). A snapshot file
        without PersistentVolumes is planned without that check, and C(not_modeled) of RV(placement) says so.
      - The nodes' C(status.images) feed C(ImageLocality), which prefers nodes already holding the replacement's
        images (a live plan keeps them with placement on; a snapshot file needs them in its Node objects, else every
        node scores 0 there and C(not_modeled) says so).
    type: bool
    default: false
  scheduler_config:
    description:
      - The C(KubeSchedulerConfiguration) the cluster's schedulers run (with O(placement)) - a mapping, YAML text,
        the path of a file, or a ConfigMap (such as the Secondary Scheduler's, key C(config.yaml)). Its profiles
        are used for pods whose C(schedulerName) they name, for example C(NodeResourcesFit) with
        C(scoringStrategy.type=MostAllocated) (binpack) or Trimaran C(TargetLoadPacking) (scored from the
        NodeMetrics in the snapshot).
      - Without it, pods of C(default-scheduler) use the upstream default profile; pods of any other scheduler are
        reported as not placed.
    type: raw
  expected_cluster_uid:
    description:
      - The UID of the C(kube-system) namespace of the cluster this plan must be made on (C(kubectl get namespace
        kube-system -o jsonpath='{.metadata.uid}')). When the connection reaches another cluster (or the snapshot
        file holds another cluster's C(kube-system)), the task fails naming both.
    type: str
  return_evictions:
    description:
      - How many evictions the result's eviction list (RV(evictions)) holds - the first ones, in order.
      - A number - at most that many; by default 1,000. Beyond the bound, RV(evictions_left_out) says how many were
        left out and RV(evictions_file) names the written C(plan.json) (O(report_dir)) that holds them all; without
        O(report_dir) the task warns that no file holds the whole list.
      - C(all) (or C(true)) - the whole list. A large cluster's list is large - 50,000 evictions are about 20 MB of
        result that Ansible copies and scrubs, then keeps in the controller's memory for each registered host; read
        C(plan.json) instead where you can.
      - C(none) (or C(false)) - no list; every other return value, such as RV(summary), is still returned.
      - A result short of some evictions carries the seal without its per-eviction digests, so
        M(descheduler.fleet.evict) refuses it as a plan; give evict the written C(plan.json), or ask for C(all).
      - Before 0.2.0 the default was the whole list.
    type: raw
    default: 1000
  verify:
    description:
      - C(server) asks the API server, for each planned eviction, whether it would be allowed now - a server-side
        dry-run eviction (C(dryRun=All)) that checks the PodDisruptionBudgets and changes nothing - and adds
        C(verification) (C(allowed), C(status), C(message)) to each eviction.
      - C(none) does not contact the cluster for this.
      - With O(snapshot), the cluster of the connection options is asked; pods it does not have are reported as such.
    type: str
    choices: [none, server]
    default: none
notes:
  - Where the descheduler itself is random (Go map iteration, unstable sorts), the plan uses a fixed order
    (nodes by name, pods by namespace and name) and stable sorts; ties may be broken differently from a real run.
  - Plugins that read measured usage (LowNodeUtilization with C(KubernetesMetrics) or C(Prometheus), Volcano's
    C(LoadAware)) are simulated from the metrics of a live cluster, or offline from recorded ones (O(metrics_file),
    O(prometheus_result), both written by M(descheduler.fleet.metrics_record)). Without them the plugin reports an
    error in RV(errors) and evicts nothing, as the descheduler does when a plugin fails; the plan warns (see
    O(fail_on)).
"""

EXAMPLES = r"""
- name: Preview what the operator's current config would evict
  descheduler.fleet.plan:
    kubeconfig: ~/.kube/prod.kubeconfig
    context: prod
    report_dir: /tmp/plans/prod
  register: plan

- name: Preview a candidate KubeDescheduler config on a snapshot, at a fixed time
  descheduler.fleet.plan:
    snapshot: snapshots/prod.yaml
    now: "2026-11-22T12:00:00Z"
    kubedescheduler:
      mode: Predictive
      deschedulingIntervalSeconds: 3600
      profiles: [AffinityAndTaints, LifecycleAndUtilization]
      profileCustomizations:
        podLifetime: 48h

- name: Preview an upstream DeschedulerPolicy
  descheduler.fleet.plan:
    snapshot: snapshots/dev.json
    policy:
      apiVersion: descheduler/v1alpha2
      kind: DeschedulerPolicy
      maxNoOfPodsToEvictPerNode: 2
      profiles:
        - name: default
          pluginConfig:
            - name: RemovePodsHavingTooManyRestarts
              args:
                podRestartThreshold: 100
          plugins:
            deschedule:
              enabled: [RemovePodsHavingTooManyRestarts]

- name: How likely each eviction is - 40 sampled cycles, enough to call one certain - and where the replacements land
  descheduler.fleet.plan:
    snapshot: snapshots/prod.yaml
    now: "2026-11-22T12:00:00Z"
    kubedescheduler:
      deschedulingIntervalSeconds: 3600
      profiles: [LifecycleAndUtilization]
    samples: 40
    seed: 1
    placement: true
    report_dir: reports/prod
  register: sampled

- name: Record the cluster's metrics once, for load-aware plans that can be replayed offline
  descheduler.fleet.metrics_record:
    kubeconfig: ~/.kube/prod.kubeconfig
    context: prod
    kubedescheduler:
      deschedulingIntervalSeconds: 3600
      profiles: [LifecycleAndUtilization]
      profileCustomizations:
        devActualUtilizationProfile: PrometheusCPUCombined
    dest: snapshots/prod-metrics.json
    prometheus_dest: snapshots/prod-prometheus.json

- name: Replay a load-aware plan from the recorded metrics (the same plan on every run)
  descheduler.fleet.plan:
    snapshot: snapshots/prod.yaml
    now: "2026-11-22T12:00:00Z"
    kubedescheduler:
      deschedulingIntervalSeconds: 3600
      profiles: [LifecycleAndUtilization]
      profileCustomizations:
        devActualUtilizationProfile: PrometheusCPUCombined
    metrics_file: snapshots/prod-metrics.json
    prometheus_result: snapshots/prod-prometheus.json
    fail_on: [plugin_error]

- name: Show the evictions
  ansible.builtin.debug:
    msg: "{{ plan.evictions | map(attribute='name') | list }}"

- name: A 150,000-pod cluster - the evictions only in the report, the counts in the result
  descheduler.fleet.plan:
    kubeconfig: ~/.kube/prod.kubeconfig
    context: prod
    report_dir: /tmp/plans/prod
    return_evictions: false
  register: large_plan

- name: At most 20 evictions in the result, all of them in plan.json
  descheduler.fleet.plan:
    snapshot: snapshots/prod.yaml
    kubedescheduler:
      mode: Predictive
      deschedulingIntervalSeconds: 3600
      profiles: [LifecycleAndUtilization]
    report_dir: /tmp/plans/prod-preview
    return_evictions: 20
  register: preview

- name: Say how many the result leaves out and where they are
  ansible.builtin.debug:
    msg: "{{ preview.evictions | length }} shown, {{ preview.evictions_left_out }} more in {{ preview.evictions_file }}"

- name: Every eviction in the result, however many (for tasks that read them all from the registered result)
  descheduler.fleet.plan:
    snapshot: snapshots/prod.yaml
    kubedescheduler:
      mode: Predictive
      deschedulingIntervalSeconds: 3600
      profiles: [LifecycleAndUtilization]
    return_evictions: all
  register: whole_plan
"""

RETURN = r"""
evictions:
  description:
    - The evictions in the order the descheduler performs them.
    - With O(samples) > 1 each also has C(frequency) (0 to 1), C(frequency_bounds) (C(lower) and C(upper), the
      frequency's 95% Wilson score interval; both equal the frequency when C(sampling.confidence.order_free)),
      C(likelihood) (C(certain), C(likely) or C(possible), see O(samples)), C(certain) (bool, C(likelihood) is
      C(certain)) and C(sampled_plugins) (every C(profile/plugin) some simulated cycle evicted the pod by).
    - With O(placement), each also has C(placement) - C(node) (null when no node fits), C(same_node), C(tied_nodes)
      (every node with the best score; the scheduler picks one at random), C(outcome) (C(placed), C(unplaced),
      C(not_replaced)), C(reason) (for an unplaced pod the scheduler's own message, such as
      C(0/5 nodes are available - 5 Insufficient cpu.)) and, when no node
      fits, C(rejected_by) (nodes rejected per filter plugin).
    - At most O(return_evictions) of them (1,000 by default), the first in order; RV(evictions_left_out) counts
      the rest.
  returned: unless O(return_evictions=none)
  type: list
  elements: dict
  sample:
    - order: 1
      namespace: shop
      name: web-5d9c7-abcde
      uid: 0a1b2c3d
      node: worker-3
      owner: {kind: ReplicaSet, name: web-5d9c7}
      plugin: LowNodeUtilization
      profile: LifecycleAndUtilization
      extension_point: Balance
      reason: node worker-3 at cpu 87% > target 50%
summary:
  description: Counts per plugin, profile, namespace, node and owner, and the eviction limits and whether they were hit.
  returned: always
  type: dict
spared:
  description: Pods considered and not evicted, counted by reason with up to five examples each.
  returned: always
  type: dict
utilization:
  description: Per node, requests against allocatable (cpu, memory, pods) before and after the plan, and its class
    for the utilization plugins.
  returned: always
  type: dict
cycle:
  description: The node list handed to the plugins, and whether the cycle was skipped (fewer than two nodes).
  returned: always
  type: dict
policy:
  description: The decoded, validated and defaulted DeschedulerPolicy that was simulated.
  returned: always
  type: dict
policy_source:
  description: C(DeschedulerPolicy) or C(KubeDescheduler).
  returned: always
  type: str
policy_origin:
  description: Where the policy came from (a module option or an object in the cluster).
  returned: always
  type: dict
source:
  description:
    - Where the objects came from - C(type) C(snapshot) with its C(path), or C(cluster) with each kind's list
      C(resource_versions) and C(read_as), per kind C(stream) (one streamed list, see O(watch_list)) or C(pages).
  returned: always
  type: dict
cluster_identity:
  description:
    - The cluster the objects came from - the UID of its C(kube-system) namespace and, read live, the API server
      URL. C(descheduler.fleet.evict) refuses to execute the plan on any other cluster.
    - From a snapshot file, the UID of the file's C(kube-system) Namespace (null when it holds none) and no server.
  returned: always
  type: dict
  sample: {uid: 5c2f0d4e-8a1b-4b7e-9f3a-2d6c1e0b9a87, server: "https://api.prod-1.example.com:6443"}
errors:
  description: Plugin errors (the cycle goes on, as the descheduler's does).
  returned: always
  type: list
  elements: dict
since_previous:
  description:
    - With O(previous_plan), what changed since that plan - C(previous_now), C(evictions_before),
      C(evictions_after), C(new) and C(gone) (pods as C(namespace/name)), C(moved) (C(pod), C(from), C(to) as
      C(profile/plugin)) and C(utilization_drift) (per resource C(mean), C(largest), C(largest_node) and
      C(nodes_compared), in percentage points of the nodes' requested share before the cycle). Null when the
      previous plan does not exist yet.
  returned: when O(previous_plan) is set
  type: dict
  sample: {previous_now: "2026-11-21T12:00:00Z", evictions_before: 12, evictions_after: 14, new: [shop/web-2],
           gone: [], moved: [], utilization_drift: {cpu: {mean: 1.2, largest: 8.5, largest_node: worker-3,
           nodes_compared: 6}, memory: null}}
fail_on_matched:
  description: The warnings that failed the task under O(fail_on) (empty when it did not fail).
  returned: always
  type: list
  elements: str
plan_warnings:
  description:
    - Notes on the input (ignored unknown fields, kinds the cluster does not serve, plugins not simulated).
    - They are also shown as Ansible warnings; the written C(plan.json) has them as C(warnings).
  returned: always
  type: list
  elements: str
evictions_left_out:
  description:
    - How many planned evictions RV(evictions) leaves out (O(return_evictions)); 0 when it holds them all.
    - RV(summary) counts every eviction, whatever the result holds.
  returned: always
  type: int
  sample: 81207
evictions_file:
  description:
    - The written C(plan.json), which holds every eviction (with O(report_dir)); null when none was written.
  returned: always
  type: str
  sample: /tmp/plans/prod/plan.json
now:
  description: The time treated as now.
  returned: always
  type: str
seal:
  description:
    - sha256 digests over what executing the plan uses (docs/plan-format.md) - each eviction's pod, UID, node,
      owner, order, plugin, profile and reason (C(entries), one short digest each, in order), C(now), the
      C(cluster_uid), the C(policy_sha256) and the number of C(evictions) - and the C(digest) over them all.
      C(descheduler.fleet.evict) checks it first and refuses a plan that differs, naming the first difference.
    - When RV(evictions) leaves some evictions out (O(return_evictions)) it has no C(entries); the written
      C(plan.json) has them.
  returned: always
  type: dict
  sample: {version: 1, algorithm: sha256, now: "2026-11-22T10:00:00Z",
           cluster_uid: 5c2f0d4e-8a1b-4b7e-9f3a-2d6c1e0b9a87, evictions: 12,
           policy_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08,
           entries: [3b1f0c2a9d8e7f60], digest: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae}
placement:
  description:
    - With O(placement), the verdict - C(placed), C(same_node) (replacements that come back to the node they were
      evicted from), C(unplaced), C(not_replaced), C(ties), the C(schedulers) profiles used, what is C(not_modeled),
      and C(spread) - per resource the standard deviation and max-min range of node utilization C(before),
      C(after_evictions) and C(after_placement), and whether the spread C(improved).
  returned: when O(placement) is true
  type: dict
  sample: {placed: 8, same_node: 3, unplaced: 1, not_replaced: 0, ties: 2,
           spread: {before: {cpu: {stddev: 21.4, range: 61.0}}, after_placement: {cpu: {stddev: 12.9, range: 38.5}},
                    improved: {cpu: true, memory: false}}}
sampling:
  description:
    - With O(samples) > 1, how sure the plan is. C(samples) and C(seed) used; C(certain) (pods whose
      C(likelihood) is C(certain)), C(possible) (every other pod some cycle evicts) and C(likely) (those of them
      evicted in at least half of the cycles); C(confidence), how the words were decided - C(method) (C(wilson)),
      C(level) (0.95), C(certain_from) (0.9, the lower bound a certain eviction reaches), C(likely_from) (0.5),
      C(samples_for_certain) (35, or 1 when C(order_free)) and C(order_free) (true when no order upstream may take
      changes which pods the cycle evicts, so every frequency is exact); C(evictions_per_cycle) and C(by_plugin)
      (per C(profile/plugin)) as C(min)/C(max)/C(mean) counts; C(other_possible_evictions), the pods the
      deterministic plan does not evict but some sampled cycle does, each with the fields of RV(evictions).
  returned: when O(samples) > 1
  type: dict
  sample: {samples: 40, seed: 0, certain: 3, possible: 4, likely: 1,
           confidence: {method: wilson, level: 0.95, certain_from: 0.9, likely_from: 0.5, samples_for_certain: 35,
                        order_free: false},
           evictions_per_cycle: {min: 5, max: 6, mean: 5.2}}
verification:
  description:
    - With O(verify=server), how many planned evictions the API server would allow now and how many it would refuse.
    - Each eviction then also carries C(verification) with C(allowed) (bool), C(status) (HTTP code of the dry run,
      201 allowed, 429 blocked by a PodDisruptionBudget) and C(message).
  returned: when O(verify=server)
  type: dict
  sample: {allowed: 10, blocked: 2}
actual_utilization:
  description:
    - What each C(LowNodeUtilization) reading actual utilization saw, keyed C(profile/plugin) under C(plugins) -
      C(mode) (C(KubernetesMetrics) or C(Prometheus)), C(query), C(resources), C(thresholds) (C(low), C(high) and,
      with deviation thresholds, C(average)) and per node the percentages it classified, on the thresholds' scale.
    - Null when no plugin read actual utilization.
  returned: always
  type: dict
  sample: {plugins: {"profile-1/LowNodeUtilization": {mode: Prometheus, query: "instance:node_cpu:rate:sum",
           resources: [MetricResource], thresholds: {low: {MetricResource: 30}, high: {MetricResource: 50}},
           nodes: {node-1: {MetricResource: 56}}}}}
report_files:
  description: Paths of the written reports.
  returned: when O(report_dir) is set
  type: dict
  sample: {json: /tmp/plans/prod/plan.json, markdown: /tmp/plans/prod/plan.md, html: /tmp/plans/prod/plan.html}
"""

from functools import partial

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.descheduler.fleet.plugins.module_utils.module_errors import run_and_report
from ansible_collections.descheduler.fleet.plugins.module_utils.module_support import argument_spec, finish
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan import FAIL_ON_CHOICES, run_plan
from ansible_collections.descheduler.fleet.plugins.module_utils.runner.plan_args import PLAN_ARG_GROUPS

ARGUMENT_SPEC = argument_spec(
    *PLAN_ARG_GROUPS,
    policy=dict(type="dict"),
    kubedescheduler=dict(type="dict"),
    policy_source=dict(type="str", choices=["auto", "kubedescheduler", "configmap"], default="auto"),
    policy_configmap=dict(
        type="dict",
        options=dict(
            namespace=dict(type="str", default="kube-system"),
            name=dict(type="str", default="descheduler"),
            key=dict(type="str", default="policy.yaml", no_log=False),  # a ConfigMap key name, not a secret
        ),
    ),
    verify=dict(type="str", choices=["none", "server"], default="none"),
    fail_on=dict(type="list", elements="str", choices=list(FAIL_ON_CHOICES), default=[]),
    previous_plan=dict(type="path"),
    return_evictions=dict(type="raw", default=1000),
)


def main() -> None:
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[("policy", "kubedescheduler")],
        supports_check_mode=True,
    )
    # this process exits after the result: the snapshot is left to the operating system (0.7 s at 150,000 pods)
    plan = run_and_report(module, partial(run_plan, process_exits_after=True), module.params)
    if plan["fail_on_matched"]:
        plan.update(failed=True, msg=f"the plan met fail_on ({', '.join(module.params['fail_on'])}): "
                                     + "; ".join(plan["fail_on_matched"]))
    else:
        plan["changed"] = False
    finish(module, plan, warnings_key="plan_warnings")


if __name__ == "__main__":
    main()
