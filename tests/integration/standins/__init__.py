"""Stand-ins for the integration tests: small versions of OLM, the Kube Descheduler and Secondary Scheduler
Operators, KubeVirt, metrics-server and Prometheus that act on an API server only through HTTP (the `kubernetes`
client), so the same stand-in runs against the suite's control plane (tests/controlplane) and against a cluster
of the tester's.

- `olm.Olm`: Subscription -> InstallPlan -> CSV phases, Manual approval, upgrades, the operator's CRD and Deployment
  (from each catalog package's `olm_types.Bundle`);
- `secondary_scheduler_operator.SecondarySchedulerOperator`: its OLM package and bundle, the SecondaryScheduler CRD,
  and Deployment `secondary-scheduler` rendered from the CR and its ConfigMap;
- `descheduler_operator.DeschedulerOperator`: renders ConfigMap/Deployment `descheduler`, its conditions and log;
- `kubevirt.KubeVirt`: virt-api's eviction webhook (an HTTPS server the API server calls), VMIs live-migrated;
- `metrics_server.MetricsServer`: the metrics.k8s.io API from two CRDs; `prometheus.PrometheusStandIn`: Prometheus'
  query API;
- `httpserver.BackgroundServer`: the one HTTP(S) server the network-facing stand-ins (and the fault proxy) serve from.
The controllers are `loop.StandIn`s: a level-triggered reconcile pass in a thread (`start()`, `stop()`, `sync()`,
`check()`).
"""
