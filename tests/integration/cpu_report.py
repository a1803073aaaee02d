"""Sum the CPU-seconds of TEST_CPU_REPORT (cpu_accounting.py) per test file, most expensive first.

    python tests/integration/cpu_report.py DIRECTORY [--tests N]

Prints per file: tests, wall seconds (summed over its tests), CPU-seconds of the pytest worker, of the subprocesses
it ran and of the control-plane servers, and the total; then each worker's tests and wall time; then the N most
expensive tests (default 20).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

COLUMNS = ("wall", "worker", "children", "servers")


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def worker_table(by_worker: dict[str, list[dict]]) -> str:
    """Each worker's tests and summed wall time: whether the workers were busy equally long."""
    out = [f"{'worker (one session)':70} {'tests':>5} {'wall':>9}"]
    for worker, lines in by_worker.items():
        out.append(f"{worker[-70:]:70} {len(lines):5d} {sum(line['wall'] for line in lines):9.1f}")
    return "\n".join(out)


def total(line: dict) -> float:
    return line["worker"] + line["children"] + line["servers"]


def table(rows: list[tuple[str, int, dict[str, float]]]) -> str:
    out = [f"{'':70} {'tests':>5} " + " ".join(f"{c:>9}" for c in (*COLUMNS, "cpu"))]
    for name, count, sums in rows:
        cpu = sums["worker"] + sums["children"] + sums["servers"]
        out.append(f"{name[-70:]:70} {count:5d} " + " ".join(f"{sums[c]:9.1f}" for c in COLUMNS) + f" {cpu:9.1f}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--tests", type=int, default=20)
    args = parser.parse_args()
    by_worker = {path.stem: read_lines(path) for path in sorted(args.directory.glob("*.jsonl"))}
    lines = [line for worker_lines in by_worker.values() for line in worker_lines]
    per_file: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0.0))
    counts: dict[str, int] = defaultdict(int)
    for line in lines:
        name = line["test"].split("::")[0]
        counts[name] += 1
        for column in COLUMNS:
            per_file[name][column] += line[column]
    ranked = sorted(per_file, key=lambda n: -(per_file[n]["worker"] + per_file[n]["children"] + per_file[n]["servers"]))
    everything = {c: sum(per_file[n][c] for n in per_file) for c in COLUMNS}
    print(table([(name, counts[name], per_file[name]) for name in ranked] + [("all", len(lines), everything)]))
    print("\n" + worker_table(by_worker))
    print(f"\nthe {args.tests} most expensive tests")
    top = sorted(lines, key=lambda line: -total(line))[:args.tests]
    print(table([(line["test"], 1, line) for line in top]))


if __name__ == "__main__":
    main()
