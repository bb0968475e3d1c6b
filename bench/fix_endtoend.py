"""`dynlint fix` end to end on real code: graph breaks before/after, and equal results.

    python bench/fix_endtoend.py                 # every case in bench/data/fix_endtoend/
    python bench/fix_endtoend.py --only ssd      # the cases whose name contains "ssd"
    python bench/fix_endtoend.py --seeds 20      # more random inputs per mask kind (default 10)
    python bench/fix_endtoend.py --show-diff     # also print what each fix changed

Each case in ``bench/data/fix_endtoend/`` is a loss or post-processing function copied from a
released package (a comment names the package, version, file and lines), with the few stubs it
needs to run and a ``build()`` / ``inputs(generator, masks)`` pair for this script.  For every
case the script copies the file into a temporary directory three times and runs, as a user
would, ``python -m dynlint fix --no-cache`` on one copy and ``python -m dynlint fix
--unsafe-fixes --no-cache`` on another.  Then, for the original and both fixed copies:

* **graph breaks** under ``torch.compile(backend="eager")``: ``torch._dynamo.explain`` on the
  first input, its ``graph_break_count`` (and the number of graphs; "no graph" when dynamo gives
  up on the whole frame, as it does for a break inside a loop, and the function runs eagerly);
* **equal results**: for every seed and every mask kind (``random``, ``empty``, ``full``,
  ``single``: the case's inputs put NaN/+-inf outside the masks where the function masks them
  out), the fixed copy compiled with ``backend="eager"`` against the original run eagerly:
  the outputs (dtype, shape, values; NaN equal to NaN; float tolerance 1e-5 relative and
  absolute, since a masked sum adds in another order) and the gradients with respect to the
  case's ``GRAD`` arguments (of the sum of the floating-point outputs); an original that raises
  must raise in the fixed copy too.

Nothing is cached: every run copies, fixes and compiles anew.  Needs torch (the main
environment's CPU torch 2.13 is enough); not part of the test suite
(``tests/test_fix_endtoend.py`` checks the harness on made-up functions).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "bench" / "data" / "fix_endtoend"
MASK_KINDS = ("random", "empty", "full", "single")
VARIANTS = ("original", "safe", "unsafe")
TOLERANCE = dict(rtol=1e-5, atol=1e-5)


@dataclass
class CaseResult:
    name: str
    source: str
    fixes: dict = field(default_factory=dict)        # variant -> number of changed lines (fix applied?)
    applied: dict = field(default_factory=dict)      # variant -> fixes applied (from dynlint fix's output)
    breaks: dict = field(default_factory=dict)       # variant -> (graph breaks, graphs) or an error text
    equal: dict = field(default_factory=dict)        # variant -> (runs equal, runs, first difference)
    diffs: dict = field(default_factory=dict)        # variant -> unified diff of the fix


# --------------------------------------------------------------------------- running one function
def _tensors(value):
    """The tensors of an output (tensors, tuples, lists, dicts), in a fixed order."""
    import torch  # noqa: PLC0415

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for key in sorted(value, key=str) for t in _tensors(value[key])]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def run_once(fn, args, grad: tuple[int, ...], seed: int | None = None):
    """(output, gradients) of ``fn(*args)`` or ("raised", exception type name).  Gradients are
    those of the sum of the floating-point outputs with respect to the ``grad`` arguments."""
    import torch  # noqa: PLC0415

    args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    for index in grad:
        if isinstance(args[index], torch.Tensor) and args[index].is_floating_point():
            args[index].requires_grad_(True)
    if seed is not None:
        torch.manual_seed(seed)
    try:
        output = fn(*args)
    except Exception as exc:  # noqa: BLE001 - any failure is a result to compare
        return "raised", type(exc).__name__
    gradients = []
    differentiable = [t for t in _tensors(output) if t.requires_grad]
    if differentiable:
        total = sum(t.sum() for t in differentiable)
        wanted = [args[i] for i in grad if isinstance(args[i], torch.Tensor) and args[i].requires_grad]
        gradients = list(torch.autograd.grad(total, wanted, allow_unused=True))
    detached = [t.detach() for t in _tensors(output)]
    plain = output if not _tensors(output) else None
    return (detached, plain), gradients


def difference(expected, actual) -> str | None:
    """None when two results of ``run_once`` agree, else what differs (one line)."""
    import torch  # noqa: PLC0415

    if expected[0] == "raised" or actual[0] == "raised":
        if expected[0] == actual[0] == "raised":
            return None
        what = lambda r: f"raised {r[1]}" if r[0] == "raised" else "returned"  # noqa: E731
        return f"original {what(expected)}, fixed {what(actual)}"
    (want, want_plain), want_grads = expected
    (got, got_plain), got_grads = actual
    if want_plain != got_plain:
        return f"output {want_plain!r} vs {got_plain!r}"
    pairs = [("output", w, g) for w, g in zip(want, got)] + [("gradient", w, g) for w, g in zip(want_grads, got_grads)]
    if len(want) != len(got) or len(want_grads) != len(got_grads):
        return f"{len(want)} outputs / {len(want_grads)} gradients vs {len(got)} / {len(got_grads)}"
    for what, w, g in pairs:
        if (w is None) != (g is None):
            return f"{what}: None vs a tensor"
        if w is None:
            continue
        if w.dtype != g.dtype or w.shape != g.shape:
            return f"{what}: {w.dtype} {tuple(w.shape)} vs {g.dtype} {tuple(g.shape)}"
        tolerance = TOLERANCE if w.is_floating_point() else dict(rtol=0, atol=0)
        try:
            torch.testing.assert_close(g, w, equal_nan=True, **tolerance)
        except AssertionError as exc:
            detail = " ".join(str(exc).split())[:160]
            return f"{what}: {detail}"
    return None


def compare(original, fixed, cases, grad=(), random=False) -> tuple[int, int, str | None]:
    """(runs equal, runs, first difference) of ``fixed`` against ``original`` over ``cases``
    (argument tuples); for functions that draw random numbers each pair of runs starts from one
    seed."""
    equal, first = 0, None
    for index, args in enumerate(cases):
        seed = index if random else None
        found = difference(run_once(original, args, grad, seed), run_once(fixed, args, grad, seed))
        if found is None:
            equal += 1
        elif first is None:
            first = found
    return equal, len(cases), first


def graph_breaks(fn, args) -> tuple[int, int] | str:
    """(graph breaks, graphs) of ``fn(*args)`` under ``torch._dynamo.explain``, or the error."""
    import torch  # noqa: PLC0415

    torch._dynamo.reset()
    try:
        explanation = torch._dynamo.explain(fn)(*args)
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:80] if str(exc) else ''}"
    finally:
        torch._dynamo.reset()
    return explanation.graph_break_count, explanation.graph_count


# --------------------------------------------------------------------------- one case
def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _dynlint_fix(path: Path, unsafe: bool) -> str:
    command = [sys.executable, "-m", "dynlint", "fix", "--no-cache", "--exit-zero", "--show-fixes"]
    if unsafe:
        command.append("--unsafe-fixes")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([*command, path.name], cwd=path.parent, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"dynlint fix failed on {path}:\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def _applied_count(output: str) -> int:
    """Fixes applied, from ``dynlint fix``'s summary line ("Fixed N findings ...")."""
    for line in output.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "Fixed" and words[1].isdigit():
            return int(words[1])
    return 0


def run_case(path: Path, seeds: int, scratch: Path) -> CaseResult:
    import torch  # noqa: PLC0415

    name = path.stem
    folder = scratch / name
    folder.mkdir()
    copies = {}
    result = CaseResult(name, "")
    original_text = path.read_text(encoding="utf-8")
    for variant in VARIANTS:
        copy = folder / variant / f"{name}.py"
        copy.parent.mkdir()
        shutil.copyfile(path, copy)
        if variant != "original":
            output = _dynlint_fix(copy, unsafe=variant == "unsafe")
            result.applied[variant] = _applied_count(output)
            fixed_text = copy.read_text(encoding="utf-8")
            result.diffs[variant] = "".join(difflib.unified_diff(
                original_text.splitlines(True), fixed_text.splitlines(True), f"{name}.py", f"{name}.py ({variant})"))
        copies[variant] = _load(copy, f"_fix_endtoend_{name}_{variant}")
    result.source = copies["original"].SOURCE
    grad = tuple(getattr(copies["original"], "GRAD", ()))
    random = bool(getattr(copies["original"], "RANDOM", False))
    cases = []
    for seed in range(seeds):
        for kind in MASK_KINDS:
            generator = torch.Generator().manual_seed(1000 * seed + MASK_KINDS.index(kind))
            cases.append(tuple(copies["original"].inputs(generator, kind)))
    functions = {variant: copies[variant].build() for variant in VARIANTS}
    for variant, fn in functions.items():
        result.breaks[variant] = graph_breaks(fn, cases[0])
    reference = functions["original"]
    for variant in ("original", "safe", "unsafe"):
        compiled = torch.compile(functions[variant], backend="eager")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result.equal[variant] = compare(reference, compiled, cases, grad, random)
        torch._dynamo.reset()
    return result


# --------------------------------------------------------------------------- report
def _breaks_text(value) -> str:
    if not isinstance(value, tuple):
        return f"error: {value}"
    if value[1] == 0:  # a break inside a loop: dynamo gives up on the whole frame
        return "no graph (frame runs eagerly)"
    return f"{value[0]} ({value[1]} graph{'s' if value[1] != 1 else ''})"


def _equal_text(value) -> str:
    equal, runs, first = value
    return f"{equal}/{runs}" if equal == runs else f"{equal}/{runs} DIFFER"


def report(results: list[CaseResult], seeds: int) -> str:
    import torch  # noqa: PLC0415

    lines = [f"torch {torch.__version__}; torch.compile(backend='eager'); {seeds} seeds x {len(MASK_KINDS)} mask "
             f"kinds ({', '.join(MASK_KINDS)}) = {seeds * len(MASK_KINDS)} input sets per case", ""]
    header = ("case", "fixes safe/unsafe", "graph breaks: original", "safe", "unsafe",
              "equal: compiled original", "safe", "unsafe")
    rows = []
    for r in results:
        rows.append((r.name, f"{r.applied.get('safe', 0)}/{r.applied.get('unsafe', 0)}",
                     _breaks_text(r.breaks["original"]), _breaks_text(r.breaks["safe"]),
                     _breaks_text(r.breaks["unsafe"]), _equal_text(r.equal["original"]),
                     _equal_text(r.equal["safe"]), _equal_text(r.equal["unsafe"])))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    lines.append("")
    for r in results:
        lines.append(f"{r.name}: {r.source}")
        for variant in VARIANTS:
            first = r.equal[variant][2]
            if first:
                lines.append(f"    {variant}: first difference: {first}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose file name contains this text")
    parser.add_argument("--seeds", type=int, default=10, help="random input sets per mask kind (default 10)")
    parser.add_argument("--show-diff", action="store_true", help="print each fix's diff")
    args = parser.parse_args(argv)
    paths = sorted(p for p in CASES.glob("*.py") if args.only in p.stem)
    if not paths:
        raise SystemExit(f"no case matches {args.only!r} in {CASES}")
    results = []
    with tempfile.TemporaryDirectory(prefix="fix_endtoend_") as scratch:
        for path in paths:
            print(f"... {path.stem}", file=sys.stderr, flush=True)
            results.append(run_case(path, args.seeds, Path(scratch)))
    print(report(results, args.seeds))
    if args.show_diff:
        for r in results:
            for variant in ("safe", "unsafe"):
                if r.diffs.get(variant):
                    print(f"\n--- {r.name}: dynlint fix{' --unsafe-fixes' if variant == 'unsafe' else ''}")
                    print(r.diffs[variant], end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
