"""`autotune ops NAME --oracle ORACLE --fuse`: the network's fusion searched
(autotune.results.fusion) and its report, as text or one JSON object."""

from __future__ import annotations

import argparse
import json
from typing import Any

from autotune.cli.errors import UsageError
from autotune.errors import OracleError
from workloads.graph import Graph


def fusion_report(graph: Graph, oracle: Any, machine: Any, args: argparse.Namespace) -> int:
    from autotune.oracles.fusion import Fusion
    from autotune.results import fusion, fusion_report

    if oracle.capability(Fusion) is None:
        raise UsageError(
            f"--fuse: oracle {args.oracle} does not time fused groups (ga1 and systolic do)"
        )
    if args.tuned or args.chart:
        raise UsageError("--fuse takes neither --tuned nor --chart")
    try:
        plan = fusion.search(graph, oracle, machine, objective=args.fuse)
    except OracleError as exc:
        if exc.setting == "machine":
            raise UsageError(f"{_machine_flag(args)}: {exc}") from None
        if exc.setting is not None:  # a limit's setting: the command line names its flag
            raise
        hint = " (give --arch NAME)" if args.oracle == "systolic" and not args.arch else ""
        raise UsageError(f"--oracle {args.oracle}: {exc}{hint}") from None
    except ValueError as exc:  # an operation no schedule of this machine runs
        raise UsageError(f"{_machine_flag(args)}: {str(exc).splitlines()[0]}") from None
    described = oracle.describe_machine(machine)
    if not args.json:
        print(fusion_report.format_report(plan, args.oracle, described))
        return 0
    print(
        json.dumps(
            {
                "network": graph.name,
                "oracle": args.oracle,
                "machine": described,
                **plan.totals(),
                "groups": fusion_report.group_rows(plan),
                "regions": fusion_report.region_rows(plan),
            }
        )
    )
    return 0


def _machine_flag(args: argparse.Namespace) -> str:
    """The setting a machine's refusal names: --machine as given, else the oracle's default."""
    return f"--machine {args.machine}" if args.machine else f"--oracle {args.oracle}"
