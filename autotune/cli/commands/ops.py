"""`autotune ops FILE|NAME`: every operation of a network graph (workloads.graph): kind,
dimensions, MACs or elements, and which installed oracles time it; with `--oracle`, the
end-to-end report of that oracle (autotune.results.network) and, with `--chart`, its PNG."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from autotune.cli.args import add_setting
from autotune.cli.errors import UsageError, message
from autotune.cli.limits import add_limits, limits
from autotune.cli.workloads import add_input_shape, parse_input_shapes
from workloads.graph import Graph, Operation

if TYPE_CHECKING:
    from autotune.oracles.base import Oracle

HELP = "list a network's operations (or, with --oracle, time every one of them)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("ops", help=HELP, description=HELP + ".")
    parser.add_argument(
        "workload",
        metavar="FILE|NAME",
        help="a workload file (ONNX models as graphs; GEMM lists as graphs of GEMMs) or a "
        "bundled network: gpt2, bert_base, llama2_7b, resnet50, mobilenet_v2",
    )
    add_input_shape(parser)
    parser.add_argument("--phase", choices=("prefill", "decode"), help="a decoder's phase")
    parser.add_argument("--seq", type=int, metavar="N", help="prompt or context length")
    parser.add_argument("--batch", type=int, metavar="B", help="sequences (or images) at once")
    parser.add_argument("--oracle", metavar="NAME", help="time every operation on this oracle")
    parser.add_argument("--machine", metavar="KEY=VALUE,...", help="the oracle's machine")
    parser.add_argument(
        "--arch",
        metavar="NAME|FILE",
        help="with --oracle systolic: the architecture (python -m autotune archs lists them); "
        "--machine then overrides its parts (dram.bandwidth=819 GB/s)",
    )
    parser.add_argument("--chart", type=Path, metavar="PNG", help="with --oracle: the chart")
    add_setting(parser, "force", action="store_true", help="replace the --chart file if it exists")
    add_limits(parser)  # with --oracle: each product is priced against them before any is timed
    parser.add_argument(
        "--tuned",
        type=Path,
        metavar="DIR",
        help="with --oracle: take the products' schedules from a tune run of the same machine "
        "(its folder, holding workload.parquet)",
    )
    parser.add_argument(
        "--clock",
        metavar="FREQ",
        help="with --oracle: the clock the report's seconds, tokens per second and joules per "
        "token are at (1 GHz, 1050 MHz); default: the machine's (a systolic architecture's "
        "array.clock), or 1 GHz for GA-1, whose chapter states none",
    )
    parser.add_argument(
        "--fuse",
        nargs="?",
        const="cycles",
        choices=("cycles", "energy", "dram_words"),
        metavar="OBJECTIVE",
        help="with --oracle: search which edges fuse (epilogues, the MLP, attention) by cycles "
        "(the default), energy or dram_words, and report each fusible group fused and apart",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def _graph(args: argparse.Namespace) -> Graph:
    from workloads import DynamicShapeError, WorkloadError
    from workloads.network import load_graph
    from workloads.networks import NETWORKS, settings

    options = {k: getattr(args, k) for k in ("phase", "seq", "batch") if getattr(args, k)}
    for key in ("seq", "batch"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            raise UsageError(f"--{key} must be a positive integer, got {getattr(args, key)}")
    if options:
        if args.workload not in NETWORKS:
            raise UsageError(
                f"--{next(iter(options))} applies to a bundled network ({', '.join(NETWORKS)})"
            )
        takes = settings(args.workload)
        for key in options:
            if key not in takes:
                flags = ", ".join(f"--{k}" for k in takes)
                raise UsageError(f"--{key}: network {args.workload} takes {flags} only")
    try:
        return load_graph(args.workload, parse_input_shapes(args.input_shape) or None, **options)
    except DynamicShapeError as exc:
        example = "x".join(str(d or 1) for d in exc.dims) or "1x3x224x224"
        raise UsageError(f"{exc} (--input-shape {exc.input_name}={example})") from None
    except WorkloadError as exc:
        raise UsageError(str(exc)) from None


def _timed_by(op: Operation, oracles: Mapping[str, Oracle]) -> str:
    from autotune.oracles.operations import is_free, timed_by

    if is_free(op):
        return "free (no word moves)"
    names = [name for name, oracle in oracles.items() if timed_by(oracle, op)]
    return ", ".join(names) if names else "untimed"


def _listing(graph: Graph) -> dict[str, object]:
    from autotune.oracles import get, names

    oracles = {name: get(name) for name in names()}
    ops = [
        {
            "name": op.name,
            "kind": op.kind,
            "block": op.block,
            "dims": list(op.dims),
            "count": op.count,
            "macs": op.macs,
            "elements": op.elements,
            "layers": list(op.layers),
            "source": op.source,
            "options": dict(op.options),
            "timed_by": _timed_by(op, oracles),
        }
        for op in graph.operations
    ]
    untimed = [o["name"] for o in ops if o["timed_by"] == "untimed"]
    return {
        "network": graph.name,
        "provenance": graph.provenance,
        "counts": graph.counts(),
        "macs": graph.macs,
        "elements": graph.elements,
        "operations": ops,
        "untimed": untimed,
    }


def _format_listing(listing: dict[str, object]) -> str:
    lines = [str(listing["network"])]
    lines += [f"  {listing['provenance']}", ""] if listing["provenance"] else [""]
    lines.append(
        f"{'operation':<40} {'kind':<11} {'dims':<22} {'count':>5} {'MACs':>16} "
        f"{'elements':>12}  timed by"
    )
    for op in listing["operations"]:  # type: ignore[attr-defined]
        dims = "x".join(map(str, op["dims"])) or "-"
        lines.append(
            f"{op['name'][:40]:<40} {op['kind']:<11} {dims[:22]:<22} {op['count']:>5} "
            f"{op['macs']:>16,} {op['elements']:>12,}  {op['timed_by']}"
        )
    counts = ", ".join(f"{n} {k}" for k, n in listing["counts"].items())  # type: ignore[attr-defined]
    lines += ["", f"operations (counts applied): {counts}", f"MACs: {listing['macs']:,}"]
    untimed = listing["untimed"]
    lines.append(
        f"untimed by every installed oracle: {', '.join(untimed)}" if untimed else "untimed: none"  # type: ignore[arg-type]
    )
    return "\n".join(lines)


def _report(graph: Graph, args: argparse.Namespace) -> int:
    from autotune.errors import OracleError
    from autotune.oracles import get
    from autotune.oracles.operations import Operations
    from autotune.results import network

    oracle = get(args.oracle)
    if oracle.capability(Operations) is None and not args.tuned:
        raise UsageError(
            f"--oracle {args.oracle} times GEMMs in tune runs only: give --tuned DIR, a tune "
            "run of this network's GEMMs (its other operations are reported untimed)"
        )
    text = ",".join(filter(None, (f"arch={args.arch}" if args.arch else "", args.machine)))
    try:
        machine = oracle.parse_machine(text) if text else oracle.default_machine()
    except ValueError as exc:
        given = (("--arch", args.arch), ("--machine", args.machine))
        flag = " ".join(f"{name} {value}" for name, value in given if value)
        raise UsageError(f"{flag}: {str(exc).splitlines()[0]}") from None
    try:
        oracle.check_machine(machine)  # a machine no schedule runs on, before any work
    except ValueError as exc:
        raise UsageError(f"--machine {args.machine}: {str(exc).splitlines()[0]}") from None
    _priced(graph, oracle, machine, args)
    if args.fuse:
        from autotune.cli.fusion import fusion_report

        return fusion_report(graph, oracle, machine, args)
    tuned = _tuned(args, machine) if args.tuned else None
    try:
        rows = network.time_graph(graph, oracle, machine, tuned)
    except OracleError as exc:
        hint = " (give --arch NAME)" if args.oracle == "systolic" and not args.arch else ""
        if exc.setting == "machine" and args.machine:
            raise UsageError(f"--machine {args.machine}: {exc}") from None
        raise UsageError(f"--oracle {args.oracle}: {exc}{hint}") from None
    described = oracle.describe_machine(machine)
    rates = network.rates(rows, _clock_hz(args, machine), _tokens(args))
    if args.json:
        print(
            json.dumps(
                {
                    **network.summary(graph, rows),
                    **rates,
                    "oracle": args.oracle,
                    "machine": described,
                    "operations": network.operation_rows(rows),
                    "blocks": network.block_rows(rows),
                }
            )
        )
    else:
        print(network.format_report(graph, rows, args.oracle, described))
        print(network.format_rates(rates))
    if args.chart:
        network.chart_png(rows, f"{graph.name} on {args.oracle}", args.chart)
    return 0


DEFAULT_CLOCK_HZ = 1e9
DECODERS = frozenset({"gpt2", "llama2_7b"})


def _clock_hz(args: argparse.Namespace, machine: object) -> float:
    from simcore.memory import UnitError, parse_frequency

    if args.clock:
        try:
            return float(parse_frequency(args.clock))
        except UnitError as exc:
            raise UsageError(f"--clock {args.clock}: {exc}") from None
    system = getattr(machine, "system", None)
    return float(system.clock_hz) if system is not None else DEFAULT_CLOCK_HZ


def _tokens(args: argparse.Namespace) -> int | None:
    """Tokens one run produces: a decoder's prompt (prefill) or one per sequence (decode)."""
    from workloads.networks import settings

    if args.workload not in DECODERS:
        return None
    known = settings(args.workload)
    seq = args.seq or int(known["seq"])  # type: ignore[call-overload]
    batch = args.batch or int(known["batch"])  # type: ignore[call-overload]
    phase = args.phase or str(known.get("phase", "prefill"))
    return batch if phase == "decode" else batch * seq


def _priced(graph: Graph, oracle: Oracle, machine: object, args: argparse.Namespace) -> None:
    """Every product's evaluation through the oracle's size guard (nothing is verified here),
    before any is timed: one past the limits is refused in one line naming it."""
    from autotune.errors import AutotuneError
    from autotune.oracles.capabilities import SizeGuard
    from autotune.settings import flag_of
    from simcore.shape import Shape

    guard = oracle.capability(SizeGuard)
    products = {op.dims[-3:]: op.name for op in graph.operations if op.family == "product"}
    for (m, k, n), name in sorted(products.items()):
        try:
            oracle.check_size(Shape(m, k, n), machine)
            if guard is not None:
                # a fused group's schedule is verified: its scratchpad and matrices priced too
                fused = bool(getattr(args, "fuse", None))
                guard.check_work(Shape(m, k, n), machine, limits(args), verify=fused)
        except AutotuneError as exc:
            if exc.setting == "machine":  # the machine's fault: its setting first
                raise UsageError(f"{exc.text.render(flag_of)} (operation {name!r})") from None
            raise UsageError(f"operation {name!r}: {exc.text.render(flag_of)}") from None


def _check_chart(path: Path, force: bool) -> None:
    """--chart names a PNG file: its folder must exist (no folder is made), a study's files and
    what is not a regular file are refused, and an existing file is replaced only if autotune
    drew it or with --force; all before any work."""
    from autotune.errors import ResultsError
    from autotune.results.files import check_output, to_stdout
    from autotune.results.plots import drawn_by_autotune

    if to_stdout(path):
        raise UsageError("--chart -: the chart is a PNG file: give its name")
    redraw = path.is_file() and drawn_by_autotune(path)
    try:
        check_output(path, force or redraw, setting=None)
    except ResultsError as exc:
        raise UsageError(f"--chart {message(exc)}") from None


def _tuned(args: argparse.Namespace, machine: object) -> dict:
    from autotune.errors import ResultsError
    from autotune.results import network, tables

    path = args.tuned / "workload.parquet" if args.tuned.is_dir() else args.tuned
    if not path.is_file():
        raise UsageError(
            f"--tuned {args.tuned}: no workload.parquet (a tune --workload run's folder)"
        )
    try:
        frame, metadata = tables.read(path)
    except ResultsError as exc:
        raise UsageError(f"--tuned {args.tuned}: {exc}") from None
    if metadata.get("oracle") != args.oracle:
        raise UsageError(
            f"--tuned {args.tuned}: tuned on oracle {metadata.get('oracle')!r}, not {args.oracle!r}"
        )
    ran = metadata.get("machine")
    here = getattr(machine, "as_dict", lambda: None)()
    if not isinstance(ran, dict) or ran != here:
        known, wanted = (ran if isinstance(ran, dict) else {}), (here or {})
        differ = ", ".join(f"{k}={known.get(k)}" for k in wanted if known.get(k) != wanted[k])
        raise UsageError(
            f"--tuned {args.tuned}: tuned on another machine ({differ}); give --machine"
        )
    return network.tuned_products(frame)


def run(args: argparse.Namespace) -> int:
    if args.chart and not args.oracle:
        raise UsageError("--chart draws the --oracle report: give --oracle NAME")
    if args.tuned and not args.oracle:
        raise UsageError("--tuned applies to the --oracle report: give --oracle NAME")
    if args.machine and not args.oracle:
        raise UsageError("--machine applies to the --oracle report: give --oracle NAME")
    if args.arch and args.oracle != "systolic":
        raise UsageError("--arch applies to --oracle systolic")
    if args.fuse and not args.oracle:
        raise UsageError("--fuse searches the --oracle report's fusion: give --oracle NAME")
    if args.chart:
        _check_chart(args.chart, args.force)
    graph = _graph(args)
    if args.oracle:
        return _report(graph, args)
    listing = _listing(graph)
    print(json.dumps(listing) if args.json else _format_listing(listing))
    return 0
