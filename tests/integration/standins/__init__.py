"""Stand-in controllers for the integration tests: small versions of OLM, the Kube Descheduler Operator and the
cluster's workload controllers that act on an API server only through HTTP (the `kubernetes` client), so the same
stand-in runs against the emulator and against a real kube-apiserver.

- `olm.Olm`: Subscription -> InstallPlan -> CSV phases, Manual approval, upgrades, the operator's CRD and Deployment
  (from each catalog package's `olm_types.Bundle`);
- `secondary_scheduler_operator.SecondarySchedulerOperator`: its OLM package and bundle, the SecondaryScheduler CRD,
  and Deployment `secondary-scheduler` rendered from the CR and its ConfigMap;
- `descheduler_operator.DeschedulerOperator`: renders ConfigMap/Deployment `descheduler`, its conditions and log;
- `workloads.Workloads`: Deployments rolled out to Running pods, where no kube-controller-manager runs;
- `kubevirt.KubeVirt`: virt-api's eviction webhook (an HTTPS server the API server calls), VMIs live-migrated;
- `emulator_gaps`: what a real API server does by itself and the emulator lacks (CRD schema admission, ...).
Each is a `loop.StandIn`: a level-triggered reconcile pass in a thread (`start()`, `stop()`, `sync()`, `check()`).
"""
