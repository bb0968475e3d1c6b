"""Lint speed on real code, side by side with the stdlib parse floor.

    python bench/lint_speed.py                  # timm + torchvision + transformers
    python bench/lint_speed.py --only timm      # one package (also: --quick = timm, 1 repeat)
    python bench/lint_speed.py --skip torchfix,libcst --repeats 5

The corpus is built from PyPI wheels (``pip download --no-deps``, only the
``.py`` files unzipped) under ``bench/.corpus`` (git-ignored) and reused.
Every row runs in its own process; rows alternate within each round (the
order rotates from round to round) and the table shows medians.  Wall time is
what a user waits; CPU time (user + sys of the process and its children) is
printed beside it because it is far less sensitive to other load on the
machine.  dynlint runs from a snapshot of the working tree taken at the start,
so edits made while the bench runs cannot mix into its figures; the snapshot is
byte-compiled once (``compileall``), so a run with ``PYTHONDONTWRITEBYTECODE``
set does not time the compilation of dynlint's own modules in every process.

Rows: stdlib ``ast.parse`` of every file (the floor), ``libcst.parse_module``
of every file, ``dynlint check -j 1`` and with default jobs (both
``--no-cache``), ``dynlint check`` with a warm cache, ``dynlint fix --diff``
(when that command exists) next to the libcst parse of just the files that
have a fix, TorchFix (installed on first use into ``bench/.corpus/torchfix``,
kept out of the environment the other rows run in), and flake8 with and without
the DYN plugin: the same flake8 command line, once with dynlint's entry point
hidden from flake8's plugin finder, so the difference is exactly the plugin.
Last, the peak RSS of the ``dynlint check`` parent process on two corpus sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CORPUS = os.path.join(HERE, ".corpus")
WHEELS = os.path.join(CORPUS, "wheels")
SOURCES = os.path.join(CORPUS, "src")
TORCHFIX_DIR = os.path.join(CORPUS, "torchfix")

# Pinned so that figures stay comparable from run to run.
PACKAGES = {
    "timm": "timm==1.0.31",
    "torchvision": "torchvision==0.29.1",
    "transformers": "transformers==5.23.0",
}

FLOOR_CODE = r"""
import ast, os, sys
failed = 0
for top in sys.argv[1:]:
    for directory, subdirs, names in os.walk(top):
        subdirs.sort()
        for name in sorted(names):
            if name.endswith(".py"):
                with open(os.path.join(directory, name), "rb") as handle:
                    data = handle.read()
                try:
                    ast.parse(data)
                except (SyntaxError, ValueError):
                    failed += 1
print(failed)
"""

LIBCST_CODE = r"""
import os, sys
import libcst
paths = sys.argv[1:]
if paths and paths[0] == "--files-from":
    with open(paths[1]) as handle:
        files = [line.rstrip("\n") for line in handle if line.strip()]
else:
    files = [os.path.join(d, n) for top in paths for d, s, ns in os.walk(top) for n in ns if n.endswith(".py")]
for path in files:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        libcst.parse_module(data)
    except Exception:
        pass
"""

FLAKE8_CODE = r"""
import sys
mode = sys.argv.pop(1)
if mode == "without-dyn":
    import flake8.plugins.finder as finder
    find = finder._find_importlib_plugins
    finder._find_importlib_plugins = lambda: (p for p in find() if p.package != "dynlint")
if mode == "time-dyn":  # CPU seconds spent inside the DYN plugin (use with -j 1)
    import atexit, time
    import dynlint.flake8_plugin as plugin
    spent = [0.0]
    run = plugin.Plugin.run
    def timed_run(self):
        start = time.process_time()
        found = list(run(self))
        spent[0] += time.process_time() - start
        return iter(found)
    plugin.Plugin.run = timed_run
    atexit.register(lambda: print(f"DYN_PLUGIN_CPU_S={spent[0]:.3f}", file=sys.stderr))
from flake8.main.cli import main
sys.exit(main())
"""

PEAK_RSS_CODE = r"""
import resource, sys
from dynlint.cli import main
code = main(sys.argv[1:])
print(f"PEAK_RSS_KB={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
sys.exit(code)
"""


# ------------------------------------------------------------------ corpus
def build_corpus(names: list[str]) -> list[str]:
    """One directory of .py files per package (downloaded and unzipped once)."""
    os.makedirs(WHEELS, exist_ok=True)
    os.makedirs(SOURCES, exist_ok=True)
    directories = []
    for name in names:
        spec = PACKAGES[name]
        version = spec.split("==")[1]
        target = os.path.join(SOURCES, f"{name}-{version}")
        if not os.path.isfile(os.path.join(target, ".complete")):
            wheel = _find_wheel(name, version) or _download(spec, name, version)
            temporary = target + ".partial"
            shutil.rmtree(temporary, ignore_errors=True)
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    if member.endswith(".py"):
                        archive.extract(member, temporary)
            open(os.path.join(temporary, ".complete"), "w").close()
            shutil.rmtree(target, ignore_errors=True)
            os.replace(temporary, target)
        directories.append(target)
    return directories


def _find_wheel(name: str, version: str) -> str | None:
    for wheel in sorted(os.listdir(WHEELS)):
        if wheel.lower().startswith(f"{name}-{version}-") and wheel.endswith(".whl"):
            return os.path.join(WHEELS, wheel)
    return None


def _download(spec: str, name: str, version: str) -> str:
    print(f"downloading {spec} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", WHEELS, spec],
                   check=True)
    wheel = _find_wheel(name, version)
    if wheel is None:
        sys.exit(f"lint_speed: pip downloaded no wheel for {spec}")
    return wheel


def corpus_files(directories: list[str]) -> list[str]:
    return [os.path.join(d, n) for top in directories for d, _, ns in os.walk(top) for n in ns if n.endswith(".py")]


def count_lines(files: list[str]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            total += handle.read().count(b"\n")
    return total


# ------------------------------------------------------------------ timing
@dataclass
class Row:
    label: str
    argv: list[str]
    env: dict = field(default_factory=dict)
    repeats: int | None = None           # None: the run's --repeats
    prime: list[str] | None = None       # an untimed command run just before each timed one
    target: float | None = None          # the goal, as a multiple of the floor
    ok_codes: tuple[int, ...] = (0,)     # exit statuses of a successful run
    paired: str | None = None            # label of the row this one is compared with, run beside it
    probe: str | None = None             # regex of a figure the command prints on stderr
    probes: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    failure: str | None = None


def timed(argv: list[str], env: dict, cwd: str) -> tuple[float, float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def run_rows(rows: list[Row], repeats: int, cwd: str) -> None:
    """Rounds of every row; a row with ``paired`` runs right after its partner (order swapped every
    other round), so their per-round ratio sees the same machine load."""
    units: list[list[Row]] = []
    for row in rows:
        partner = next((unit for unit in units if unit[0].label == row.paired), None)
        if partner is not None:
            partner.append(row)
        else:
            units.append([row])
    rounds = max((row.repeats or repeats) for row in rows)
    for round_number in range(rounds):
        shift = round_number % len(units)
        ordered = [row for unit in units[shift:] + units[:shift]
                   for row in (unit if round_number % 2 == 0 else unit[::-1])]
        for row in ordered:
            if row.failure or len(row.walls) >= (row.repeats or repeats):
                continue
            if row.prime:
                subprocess.run(row.prime, cwd=cwd, env={**os.environ, **row.env}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            wall, cpu, proc = timed(row.argv, row.env, cwd)
            if proc.returncode not in row.ok_codes:
                row.failure = f"exit {proc.returncode}: {(proc.stderr.strip().splitlines() or [''])[-1][:100]}"
                continue
            row.walls.append(wall)
            row.cpus.append(cpu)
            if row.probe:
                match = re.search(row.probe, proc.stderr)
                row.probes.append(float(match.group(1)) if match else float("nan"))
            print(f"  round {round_number + 1}: {row.label}: {wall:.2f} s", file=sys.stderr, flush=True)


def peak_rss_kb(argv: list[str], env: dict, cwd: str) -> int | None:
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    match = re.search(r"PEAK_RSS_KB=(\d+)", proc.stderr)
    return int(match.group(1)) if match else None


# ------------------------------------------------------------------ environment
def snapshot_dynlint() -> str:
    """Copy the working tree's dynlint package, so the whole bench measures one version of it."""
    target = os.path.join(CORPUS, "dynlint-snapshot")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(os.path.join(REPO, "dynlint"), os.path.join(target, "dynlint"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    # Byte-compiled once here: with PYTHONDONTWRITEBYTECODE set, every timed process would
    # otherwise compile dynlint's modules from source again, and measure that as analysis.
    subprocess.run([sys.executable, "-m", "compileall", "-q", target], check=True, stdout=subprocess.DEVNULL)
    return target


def git_describe() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "dynlint"], cwd=REPO, capture_output=True,
                               text=True).stdout.strip()
    except OSError:
        return "unknown"
    return f"{commit}{' + uncommitted changes in dynlint/' if dirty else ''}"


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            names = re.findall(r"model name\s*:\s*(.*)", handle.read())
            cpu = names[0] if names else cpu
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    memory = ""
    try:
        with open("/proc/meminfo") as handle:
            kb = int(re.search(r"MemTotal:\s*(\d+)", handle.read()).group(1))
            memory = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, AttributeError):
        pass
    return (f"{cpu}, {usable} usable CPUs{memory}; {platform.system()} {platform.release()};"
            f" Python {platform.python_version()}")


def ensure_torchfix() -> str | None:
    """TorchFix in its own --target directory (its flake8 entry point must not load in the flake8 rows)."""
    if not os.path.isdir(os.path.join(TORCHFIX_DIR, "torchfix")):
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                               TORCHFIX_DIR, "torchfix"], capture_output=True, text=True)
        if proc.returncode != 0:
            return None
    check = subprocess.run([sys.executable, "-c", "import torchfix"],
                           env={**os.environ, "PYTHONPATH": TORCHFIX_DIR}, capture_output=True)
    return TORCHFIX_DIR if check.returncode == 0 else None


def fix_command() -> list[str] | None:
    """How to ask dynlint for a diff of its fixes, if this version can."""
    for argv in (["fix", "--diff"], ["check", "--diff"]):
        proc = subprocess.run([sys.executable, "-m", "dynlint", argv[0], "--help"], capture_output=True, text=True)
        if proc.returncode == 0 and "--diff" in proc.stdout:
            return argv
    return None


def files_with_fixes(dynlint: list[str], env: dict, directories: list[str], cwd: str, list_path: str) -> tuple:
    proc = subprocess.run([*dynlint, "check", "--no-cache", "--output-format", "json", "--exit-zero",
                           *directories], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True)
    findings = json.loads(proc.stdout or "[]")
    # What `dynlint fix --diff` applies by default: safe fixes.
    fixed = sorted({f["filename"] for f in findings if f.get("fix") and f["fix"]["applicability"] == "safe"})
    with open(list_path, "w") as handle:
        handle.write("".join(os.path.join(cwd, name) + "\n" for name in fixed))
    dyn000 = [f["filename"] for f in findings if f["code"] == "DYN000"]
    return fixed, dyn000, len(findings)


# ------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", help=f"packages (comma-separated) of {', '.join(PACKAGES)}")
    parser.add_argument("--quick", action="store_true", help="timm only, one round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (default 3); the table shows medians")
    parser.add_argument("--slow-repeats", type=int, default=1,
                        help="rounds for the slow third-party rows: libcst, TorchFix (default 1)")
    parser.add_argument("--skip", default="", help="rows to leave out: libcst,fix,torchfix,flake8,memory")
    args = parser.parse_args()

    names = [n.strip() for value in (args.only or []) for n in value.split(",") if n.strip()] or list(PACKAGES)
    if args.quick:
        names, args.repeats = ["timm"], 1
    unknown = [n for n in names if n not in PACKAGES]
    if unknown:
        parser.error(f"unknown package(s) {', '.join(unknown)}; known: {', '.join(PACKAGES)}")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}

    directories = build_corpus(names)
    relative = [os.path.relpath(d, SOURCES) for d in directories]
    files = corpus_files(directories)
    lines = count_lines(files)
    snapshot = snapshot_dynlint()
    env = {"PYTHONPATH": snapshot, "CI": "1"}
    dynlint = [sys.executable, "-m", "dynlint"]
    cache_dir = os.path.join(CORPUS, "cache")
    jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None

    fixed_list = os.path.join(CORPUS, "files-with-fixes.txt")
    fixed, dyn000, finding_count = files_with_fixes(dynlint, env, relative, SOURCES, fixed_list)
    floor_failures = subprocess.run([sys.executable, "-c", FLOOR_CODE, *relative], cwd=SOURCES, capture_output=True,
                                    text=True).stdout.strip()

    floor = Row("stdlib ast.parse of every file (floor)", [sys.executable, "-c", FLOOR_CODE, *relative])
    rows = [floor]
    if "libcst" not in skip:
        rows.append(Row("libcst.parse_module of every file", [sys.executable, "-c", LIBCST_CODE, *relative],
                        repeats=args.slow_repeats))
    check = [*dynlint, "check", "-q", "--exit-zero", "--output-format", "concise"]
    rows += [
        Row("dynlint check -j 1 --no-cache", [*check, "-j", "1", "--no-cache", *relative], env, target=1.5),
        Row(f"dynlint check --no-cache (default jobs = {jobs})", [*check, "--no-cache", *relative], env, target=2.0),
        Row("dynlint check, warm cache", [*check, "--cache-dir", cache_dir, *relative], env, target=0.1,
            prime=[*check, "--cache-dir", cache_dir, *relative]),
    ]
    notes = []
    fix_argv = fix_command() if "fix" not in skip else None
    if fix_argv:
        rows.append(Row("libcst.parse_module of the files with a safe fix",
                        [sys.executable, "-c", LIBCST_CODE, "--files-from", fixed_list]))
        rows.append(Row(f"dynlint {' '.join(fix_argv)} --no-cache", [*dynlint, *fix_argv, "--no-cache", *relative],
                        env, ok_codes=(0, 1)))  # 1: there is a diff
    elif "fix" not in skip:
        notes.append("dynlint fix --diff: skipped, this version of dynlint has no --diff yet")
    if "torchfix" not in skip:
        torchfix = ensure_torchfix()
        if torchfix:
            rows.append(Row(f"TorchFix 0.7 -j {jobs}", [sys.executable, "-m", "torchfix", "-j", str(jobs), *relative],
                            {"PYTHONPATH": torchfix}, repeats=args.slow_repeats))
        else:
            notes.append("TorchFix: skipped, `pip install torchfix` failed")
    if "flake8" not in skip:
        flake8 = ["--exit-zero", "--extend-select", "DYN", *relative]
        rows.append(Row("flake8 (pyflakes + pycodestyle), DYN plugin not loaded",
                        [sys.executable, "-c", FLAKE8_CODE, "without-dyn", *flake8], env))
        rows.append(Row("flake8 + DYN plugin (same command line)",
                        [sys.executable, "-c", FLAKE8_CODE, "with-dyn", *flake8], env,
                        paired="flake8 (pyflakes + pycodestyle), DYN plugin not loaded"))
        rows.append(Row("flake8 -j 1 + DYN plugin, time inside the plugin measured",
                        [sys.executable, "-c", FLAKE8_CODE, "time-dyn", "-j", "1", *flake8], env,
                        probe=r"DYN_PLUGIN_CPU_S=([0-9.]+)"))

    print(f"corpus: {', '.join(relative)}: {len(files)} files, {lines:,} lines", file=sys.stderr)
    run_rows(rows, args.repeats, SOURCES)

    floor_wall = statistics.median(floor.walls)
    floor_cpu = statistics.median(floor.cpus)
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"machine: {machine()}")
    if load_before:
        print(f"load average (1 min) at start / end: {load_before[0]:.2f} / {load_after[0]:.2f}")
    print(f"dynlint: {git_describe()}")
    print(f"corpus: {', '.join(relative)}: {len(files):,} files, {lines:,} lines")
    print(f"findings: {finding_count:,} ({len(fixed)} files with a safe fix); DYN000: {len(dyn000)}"
          f" (files CPython rejects: {floor_failures})")
    print(f"medians of {args.repeats} rounds (slow rows: {args.slow_repeats}); CPU = user + sys incl. children")
    print()
    width = max(len(row.label) for row in rows)
    print(f"{'':{width}}  {'wall s':>8}  {'x floor':>7}  {'CPU s':>8}  {'x floor':>7}  target")
    for row in rows:
        if row.failure or not row.walls:
            print(f"{row.label:{width}}  failed: {row.failure}")
            continue
        wall, cpu = statistics.median(row.walls), statistics.median(row.cpus)
        target = ""
        if row.target is not None:
            target = f"<= {row.target:g}x: {'met' if wall <= row.target * floor_wall else 'MISSED'}"
        print(f"{row.label:{width}}  {wall:8.2f}  {wall / floor_wall:6.2f}x  {cpu:8.2f}  {cpu / floor_cpu:6.2f}x"
              f"  {target}")
    by_label = {row.label: row for row in rows if row.walls}
    without = by_label.get("flake8 (pyflakes + pycodestyle), DYN plugin not loaded")
    with_dyn = by_label.get("flake8 + DYN plugin (same command line)")
    if without and with_dyn:
        ratio = statistics.median(b / a for a, b in zip(without.walls, with_dyn.walls))
        cpu_ratio = statistics.median(b / a for a, b in zip(without.cpus, with_dyn.cpus))
        print(f"flake8 DYN plugin marginal cost, median of per-round ratios: {ratio:.3f}x wall, {cpu_ratio:.3f}x CPU"
              f" (target <= 1.15x: {'met' if ratio <= 1.15 else 'MISSED'})")
    inside = by_label.get("flake8 -j 1 + DYN plugin, time inside the plugin measured")
    if inside and inside.probes:
        plugin_cpu = statistics.median(inside.probes)
        total_cpu = statistics.median(inside.cpus)
        print(f"flake8 -j 1: {plugin_cpu:.2f} s of {total_cpu:.2f} s CPU inside the DYN plugin:"
              f" {total_cpu / (total_cpu - plugin_cpu):.3f}x the time without it")
    fix_row = next((row for row in rows if row.label.startswith("dynlint ") and "diff" in row.label and row.walls),
                   None)
    fixed_parse = by_label.get("libcst.parse_module of the files with a safe fix")
    if fixed_parse and not fixed:
        notes.append("no file has a safe fix: the libcst row is its import alone")
    if fix_row and fixed_parse:
        budget = floor_wall + statistics.median(fixed_parse.walls)
        print(f"dynlint fix --diff budget (floor + libcst parse of files with a fix): {budget:.2f} s:"
              f" {'met' if statistics.median(fix_row.walls) <= budget else 'MISSED'}")
    for note in notes:
        print(f"note: {note}")

    if "memory" not in skip:
        print()
        print("peak RSS of the dynlint check parent process (--no-cache):")
        corpora = [(relative[0], [relative[0]])]
        if len(relative) > 1:
            corpora.append(("all of the above", relative))
        for name, targets in corpora:
            count = len(corpus_files([os.path.join(SOURCES, t) for t in targets]))
            figures = []
            for jobs_flag in ("1", "0"):
                kb = peak_rss_kb([sys.executable, "-c", PEAK_RSS_CODE, "check", "-q", "--exit-zero", "--no-cache",
                                  "-j", jobs_flag, *targets], env, SOURCES)
                figures.append(f"-j {jobs_flag}: {kb / 1024:.0f} MiB" if kb else f"-j {jobs_flag}: failed")
            print(f"  {name} ({count:,} files): {', '.join(figures)}")


if __name__ == "__main__":
    main()
