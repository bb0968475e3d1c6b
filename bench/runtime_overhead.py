"""Per-step overhead of the recompilation detector on realistic eager models, and its cost model.

Two nn.TransformerEncoder models (eval, no_grad, MHA fast path off, so every submodule
is really called): a 12-layer one (d_model 256, batch 4x64, a step of tens of ms, 122
modules) and a 2-layer one (d_model 128, batch 4x32, a step of about 2 ms, 22 modules).
For each, plain steps, steps under a do-nothing TorchDispatchMode (the floor any
op-level tracer pays: the "trace" backend is one), and "shapes" and "trace" steps are
measured in the same process, interleaved round by round; printed side by side: median
step times, the median of the per-round ratios (each mode against the plain run of the
same round, which cancels slow drift of a shared machine), and the cost per module call
and per aten op derived from them.

Targets (issue 12): trace <= 1.3x and shapes <= 1.1x at steps >= 20 ms; trace <= 2x and
shapes <= 1.3x at ~2 ms.

    python bench/runtime_overhead.py [--rounds 15] [--steps 5] [--threads 1] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

from dynlint.runtime import detect_recompilation_auto_model

MODELS = {
    # name: (layers, d_model, feed-forward, batch, sequence, targets {mode: ratio})
    "large": (12, 256, 1024, 4, 64, {"shapes": 1.10, "trace": 1.30}),
    "small": (2, 128, 512, 4, 32, {"shapes": 1.30, "trace": 2.00}),
}
MODES = ("plain", "floor", "shapes", "trace")


class DispatchFloor(TorchDispatchMode):
    """Does nothing but run each op: what Python-level op interception itself costs."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def build_model(layers, d_model, feed_forward, device):
    layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=8, dim_feedforward=feed_forward, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).to(device)
    return model.eval()


def count_ops(model, batch) -> int:
    class Count(TorchDispatchMode):
        ops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.ops += 1
            return func(*args, **(kwargs or {}))

    with Count():
        model(batch)
    return Count.ops


def timed_steps(model, batch, steps, device, floor=False) -> float:
    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def run():
        if floor:
            with DispatchFloor():
                model(batch)
        else:
            model(batch)

    run()  # warm-up step (the first graph of each module, for the detector)
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        run()
    sync()
    return (time.perf_counter() - start) / steps


def measure(name, args):
    layers, d_model, feed_forward, batch_size, seq, targets = MODELS[name]
    torch.manual_seed(0)
    model = build_model(layers, d_model, feed_forward, args.device)
    batch = torch.randn(batch_size, seq, d_model, device=args.device)
    calls = sum(1 for _ in model.modules())
    ops = count_ops(model, batch)
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(args.rounds):
        for mode in MODES:     # interleaved: drift in machine speed hits every mode alike
            if mode in ("shapes", "trace"):
                detect_recompilation_auto_model(model, csv_out=None, backend=mode)
            times[mode].append(timed_steps(model, batch, args.steps, args.device, floor=mode == "floor"))
            if mode in ("shapes", "trace"):
                model.remove_hooks()
    print(f"{name}: {layers}-layer nn.TransformerEncoder (d_model {d_model}), batch {batch_size}x{seq}: "
          f"{calls} module calls and {ops} aten ops a step")
    print(f"{'mode':<8} {'step ms':>9} {'ratio':>7}  target")
    plain = statistics.median(times["plain"])
    for mode in MODES:
        median = statistics.median(times[mode])
        ratio = statistics.median(t / p for t, p in zip(times[mode], times["plain"]))
        target = targets.get(mode)
        verdict = "" if target is None else f"<= {target:.2f}" + (" ok" if ratio <= target else " MISSED")
        note = "  (a do-nothing dispatch mode: what any op-level tracer pays)" if mode == "floor" else ""
        print(f"{mode:<8} {median * 1e3:>9.2f} {ratio:>6.3f}x  {verdict}{note}")
    print(f"(median plain step {plain * 1e3:.2f} ms)")
    print()


class Chain(nn.Module):
    """``calls`` modules that run no aten op: the detector's cost per module call, alone."""

    def __init__(self, calls):
        super().__init__()
        self.body = nn.Sequential(*[nn.Identity() for _ in range(calls - 2)])

    def forward(self, x):
        return self.body(x)


class Ops(nn.Module):
    """One module running ``ops`` small aten ops: the cost per op, alone."""

    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def forward(self, x):
        for _ in range(self.ops):
            x = x + 1
        return x


def cost_model(args) -> None:
    """Per module call and per aten op, from models that have only one or the other."""
    x = torch.zeros(4, device=args.device)
    rows = []
    for label, model, unit in (("module call", Chain(200), 200), ("aten op", Ops(200), 200)):
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        for _ in range(args.rounds * 2):
            for mode in MODES:
                if mode in ("shapes", "trace"):
                    detect_recompilation_auto_model(model, csv_out=None, backend=mode)
                times[mode].append(timed_steps(model, x, args.steps * 4, args.device, floor=mode == "floor"))
                if mode in ("shapes", "trace"):
                    model.remove_hooks()
        cost = {mode: statistics.median(t - p for t, p in zip(times[mode], times["plain"])) / unit * 1e6
                for mode in MODES[1:]}
        rows.append((label, cost))
    print("cost model (us each; from a chain of 200 modules running no op, and one module running 200 ops):")
    print(f"{'per':<12} {'floor':>7} {'shapes':>7} {'trace':>7}")
    for label, cost in rows:
        print(f"{label:<12} {cost['floor']:>7.2f} {cost['shapes']:>7.2f} {cost['trace']:>7.2f}")
    print("overhead of a step ~ calls x (per module call) + ops x (per aten op); 'floor' is the do-nothing "
          "dispatch mode alone")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: on a shared 2-core machine more threads mostly add noise)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--model", choices=(*MODELS, "both", "none"), default="both",
                        help="which model to time (none: only the cost model)")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    # The inference fast path fuses each layer into one op; off, every submodule is really called.
    torch.backends.mha.set_fastpath_enabled(False)
    print(f"device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
          f"{args.rounds} interleaved rounds x {args.steps} steps; median step time, median of per-round ratios")
    print()
    with torch.no_grad():
        for name in MODELS:
            if args.model in (name, "both"):
                measure(name, args)
        cost_model(args)


if __name__ == "__main__":
    main()
