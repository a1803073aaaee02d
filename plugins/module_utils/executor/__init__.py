"""Executing an eviction plan: limits and pacing, a resumable journal, per-pod state machines, KubeVirt migrations.

``run.execute(api_client, targets, options)`` is the entry point; ``runner/evict.py`` turns module parameters into
its arguments.
"""
