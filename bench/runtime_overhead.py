"""Per-step overhead of the recompilation detector on a realistic eager model.

A 12-layer nn.TransformerEncoder (eval, no_grad, MHA fast path off, so every
submodule is really called: ~110 module calls a step).  Plain, "shapes" and
"trace" steps are measured in the same process, interleaved round by round;
printed side by side: median step times, and the median of the per-round
ratios (each mode against the plain run of the same round, which cancels
slow drift of a shared machine).
Targets (issue 4): shapes <= 1.10x, trace <= 2x for a step of >= 20 ms.

    python bench/runtime_overhead.py [--rounds 15] [--steps 3] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn as nn

from dynlint.runtime import detect_recompilation_auto_model


def build_model(device):
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False).to(device)
    model.eval()
    # The inference fast path fuses each layer into one op; off, every submodule is really called.
    torch.backends.mha.set_fastpath_enabled(False)
    return model


def timed_steps(model, batch, steps, device) -> float:
    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    model(batch)  # warm-up step (first graph of each module in the detector)
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        model(batch)
    sync()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = build_model(args.device)
    batch = torch.randn(args.batch, args.seq, 256, device=args.device)
    calls = sum(1 for _ in model.modules())
    times: dict[str, list[float]] = {"plain": [], "shapes": [], "trace": []}
    with torch.no_grad():
        for _ in range(args.rounds):
            for mode in times:     # interleaved: drift in machine speed hits every mode alike
                if mode != "plain":
                    detect_recompilation_auto_model(model, csv_out=None, backend=mode)
                times[mode].append(timed_steps(model, batch, args.steps, args.device))
                if mode != "plain":
                    model.remove_hooks()

    print(f"model: 12-layer nn.TransformerEncoder (d_model 256), {calls} modules, batch {args.batch}x{args.seq}, "
          f"device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{args.rounds} interleaved rounds x {args.steps} steps; median step time, median of per-round ratios")
    print(f"{'mode':<8} {'step ms':>9} {'ratio':>7} {'target':>7}")
    for mode, target in (("plain", None), ("shapes", 1.10), ("trace", 2.0)):
        median = statistics.median(times[mode])
        ratio = statistics.median(t / p for t, p in zip(times[mode], times["plain"]))
        verdict = "" if target is None else (f"<= {target:.2f}" + (" ok" if ratio <= target else " MISSED"))
        print(f"{mode:<8} {median * 1e3:>9.2f} {ratio:>6.3f}x {verdict}")


if __name__ == "__main__":
    main()
