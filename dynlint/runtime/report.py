"""The recompilation report: Gaudi-style tables, CSV, JSON, root causes.

Plain Python (no torch): a report is built from JSON-able dicts, so reports
from several ranks can be gathered, merged and rebuilt anywhere.
"""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import asdict, dataclass, field

# Gaudi's column names and comments, kept verbatim so its users feel at home.
STEP_COLUMNS = ("Step", "Recompiling modules", "New in", "New out", "Class", "Location", "Comment")
SUMMARY_COLUMNS = ("Module name", "Recompile count")
ROOT_COLUMN = "Root cause"     # ours, after Gaudi's summary columns
COMMENT_NEW_INPUT = "Recompiled due to new input shape"
COMMENT_NEW_OUTPUT = "Already processed input shape still recompiled and has new output shape. Maybe dyn ops"
COMMENT_SAME_SHAPES = "Already processed input shape still recompiled. Maybe dyn ops"
COMMENT_CHILD_SUFFIX = ". Could be due to dynamic child"
# Ours: what Gaudi's tool cannot tell apart.
COMMENT_DYNAMIC_INPUT = "Recompiled due to new input shape produced by a dynamic op"
COMMENT_MODE_SWITCH = "Recompiled after a mode switch (train/eval, grad mode, requires_grad). Not dynamic"
COMMENT_STATE_CHANGE = "Recompiled because an attribute or object it reads changed. Not shape-related"
# Our addition, after Gaudi's columns: what the backend saw (aten op and user line, guard, break reason).
CAUSE_COLUMN = "Cause"


@dataclass
class Event:
    """One recompile of one module in one step (or, in the compile backend, one graph break)."""

    step: int
    path: str
    new_in: bool
    new_out: bool
    comment: str                 # one of the Gaudi comments, or "Graph break: <reason>"
    cause: str = ""
    dynamic: bool = False        # not explained by a new input shape: a dynamic op, data branch, break
    explained_by_child: bool = False
    rank: int | None = None

    @property
    def root(self) -> bool:
        """A root cause: dynamic, and no dynamic recompile below it in the tree explains it."""
        return self.dynamic and not self.explained_by_child

    def full_comment(self) -> str:
        return self.comment + (COMMENT_CHILD_SUFFIX if self.explained_by_child else "")

    def to_dict(self) -> dict:
        data = asdict(self)
        data["root_cause"] = self.root
        data["comment"] = self.full_comment()
        data["base_comment"] = self.comment
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Event":
        return cls(step=int(data["step"]), path=data["path"], new_in=bool(data["new_in"]),
                   new_out=bool(data["new_out"]), comment=data.get("base_comment", data["comment"]),
                   cause=data.get("cause", ""), dynamic=bool(data.get("dynamic")),
                   explained_by_child=bool(data.get("explained_by_child")), rank=data.get("rank"))


@dataclass
class ModuleInfo:
    path: str
    cls: str
    location: str            # file:line of the class's forward
    calls: int = 0


def mark_explained_by_children(events: list[Event]) -> None:
    """Root-cause pass over the whole tree, per step (and rank).

    A dynamic event of module P is explained when, in the same step, any module
    below P (any depth, not only the last child) had a dynamic event: the child
    is the better place to look.  Used where per-call nesting is unknown (the
    compile backend); the eager backends mark this exactly while the calls run.
    A graph break is never explained away: it happened in P's own code (its
    forward or a function it called), so it is P's own cause even when a child
    is dynamic too.
    """
    by_step: dict[tuple, list[Event]] = {}
    for event in events:
        by_step.setdefault((event.rank, event.step), []).append(event)
    for group in by_step.values():
        dynamic_paths = {e.path for e in group if e.dynamic}
        for event in group:
            if event.dynamic and not event.comment.startswith("Graph break"):
                prefix = event.path + "/"
                event.explained_by_child = any(p.startswith(prefix) for p in dynamic_paths)


@dataclass
class RecompileReport:
    backend: str
    steps: int
    modules: list[ModuleInfo]
    events: list[Event]
    rank: int | None = None
    per_rank: dict = field(default_factory=dict)   # rank -> RecompileReport, only on a merged report
    dropped_events: int = 0                       # events beyond the memory cap (counts stay exact)
    counts: dict = field(default_factory=dict)    # path -> recompile count (may exceed len(events))

    def __post_init__(self):
        if not self.counts:
            for event in self.events:
                self.counts[event.path] = self.counts.get(event.path, 0) + 1

    # -- queries -----------------------------------------------------------
    def recompile_counts(self) -> list[tuple[str, int]]:
        """(module path, count) for modules that recompiled: root causes first (most root-cause
        events first), then the others, most recompiles first, ties in tree order.

        A module recompiling only because of others (new input shapes, a dynamic child) ranks
        below the module that causes it, however often it recompiled."""
        order = {m.path: i for i, m in enumerate(self.modules)}
        roots = self._root_counts()
        items = [(p, c) for p, c in self.counts.items() if c]
        items.sort(key=lambda pc: (-roots.get(pc[0], 0), -pc[1], order.get(pc[0], len(order)), pc[0]))
        return items

    def _root_counts(self) -> dict:
        counts: dict[str, int] = {}
        for event in self.events:
            if event.root:
                counts[event.path] = counts.get(event.path, 0) + 1
        return counts

    def dynamic_modules(self) -> list[str]:
        """Root-cause module paths (dynamic ops, data branches, graph breaks), most recompiles first."""
        root_counts = self._root_counts()
        order = {m.path: i for i, m in enumerate(self.modules)}
        return sorted(root_counts, key=lambda p: (-root_counts[p], order.get(p, len(order)), p))

    def module(self, path: str) -> ModuleInfo | None:
        for info in self.modules:
            if info.path == path:
                return info
        return None

    # -- tables ------------------------------------------------------------
    def _multi_rank(self) -> bool:
        return len({e.rank for e in self.events}) > 1 or len(self.per_rank) > 1

    def step_rows(self) -> list[list[str]]:
        infos = {m.path: m for m in self.modules}
        order = {m.path: i for i, m in enumerate(self.modules)}
        rows = []
        # Within a step, parents before children (tree order) reads like the model's structure.
        for event in sorted(self.events, key=lambda e: (e.step, e.rank or 0, order.get(e.path, len(order)))):
            info = infos.get(event.path)
            row = [str(event.step), event.path, str(event.new_in), str(event.new_out),
                   info.cls if info else "", info.location if info else "", event.full_comment(), event.cause]
            if self._multi_rank():
                row.insert(0, "" if event.rank is None else str(event.rank))
            rows.append(row)
        return rows

    def step_header(self) -> list[str]:
        header = list(STEP_COLUMNS) + [CAUSE_COLUMN]
        return (["Rank"] + header) if self._multi_rank() else header

    def summary_rows(self) -> list[list[str]]:
        roots = self._root_counts()
        return [[path, str(count), "yes" if path in roots else ""] for path, count in self.recompile_counts()]

    def summary_header(self) -> list[str]:
        return list(SUMMARY_COLUMNS) + [ROOT_COLUMN]

    def format_tables(self) -> str:
        title = f"dynlint recompilation report ({self.backend} backend, {steps_text(self.steps)}"
        title += f", rank {self.rank})" if self.rank is not None else ")"
        parts = [title, ""]
        if self.events:
            parts.append(_format_table(self.step_header(), self.step_rows()))
        else:
            parts.append("No module recompiled after its first compile.")
        if self.dropped_events:
            parts.append(f"({self.dropped_events} more event(s) not kept; counts below include them)")
        parts.append("")
        summary = self.summary_rows()
        if summary:
            parts.append(_format_table(self.summary_header(), summary))
        dynamic = self.dynamic_modules()
        parts.append("")
        parts.append("Dynamic modules (root causes): " + (", ".join(dynamic) if dynamic else "none"))
        return "\n".join(parts)

    def print_tables(self, file=None) -> None:
        file = file or sys.stdout
        if self.per_rank:
            for rank in sorted(self.per_rank):
                print(self.per_rank[rank].format_tables(), file=file)
                print(file=file)
            print("=== all ranks merged ===", file=file)
        print(self.format_tables(), file=file)

    # -- files -------------------------------------------------------------
    def write_csv(self, csv_out: str) -> tuple[str, str]:
        """Write ``<csv_out>_1.csv`` (per-step table) and ``<csv_out>_2.csv`` (summary); quoted as needed."""
        step_path, summary_path = f"{csv_out}_1.csv", f"{csv_out}_2.csv"
        with open(step_path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL)
            writer.writerow(self.step_header())
            writer.writerows(self.step_rows())
        with open(summary_path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL)
            writer.writerow(self.summary_header())
            writer.writerows(self.summary_rows())
        return step_path, summary_path

    def to_dict(self) -> dict:
        return {
            "backend": self.backend,
            "steps": self.steps,
            "rank": self.rank,
            "modules": [dict(asdict(m), recompile_count=self.counts.get(m.path, 0)) for m in self.modules],
            "events": [e.to_dict() for e in self.events],
            "dropped_events": self.dropped_events,
            "recompile_counts": dict(self.recompile_counts()),
            "dynamic_modules": self.dynamic_modules(),
            "per_rank": {str(r): rep.to_dict() for r, rep in sorted(self.per_rank.items())},
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict) -> "RecompileReport":
        modules = [ModuleInfo(m["path"], m["cls"], m["location"], m.get("calls", 0)) for m in data["modules"]]
        events = [Event.from_dict(e) for e in data["events"]]
        report = cls(data["backend"], int(data["steps"]), modules, events, data.get("rank"),
                     dropped_events=int(data.get("dropped_events", 0)),
                     counts={m["path"]: int(m.get("recompile_count", 0)) for m in data["modules"]
                             if m.get("recompile_count")} or {})
        report.per_rank = {int(r): cls.from_dict(d) for r, d in data.get("per_rank", {}).items()}
        return report

    def to_html(self, path: str) -> str:
        from dynlint.runtime.html import render_report

        with open(path, "w", encoding="utf-8") as handle:
            handle.write(render_report(self))
        return path


def steps_text(steps: int) -> str:
    """How many steps ran, with the numbers the tables use (from 0, as Gaudi's tool)."""
    if steps <= 0:
        return "no step run"
    if steps == 1:
        return "1 step, numbered 0"
    return f"{steps} steps, numbered 0-{steps - 1}"


def merge_reports(reports: list[RecompileReport]) -> RecompileReport:
    """One report over several ranks: events tagged with their rank, counts summed."""
    reports = sorted(reports, key=lambda r: (r.rank is None, r.rank or 0))
    modules: dict[str, ModuleInfo] = {}
    events: list[Event] = []
    counts: dict[str, int] = {}
    for index, report in enumerate(reports):
        rank = report.rank if report.rank is not None else index
        for info in report.modules:
            merged = modules.setdefault(info.path, ModuleInfo(info.path, info.cls, info.location))
            merged.calls += info.calls
        for event in report.events:
            events.append(Event(**{**asdict(event), "rank": rank}))
        for path, count in report.counts.items():
            counts[path] = counts.get(path, 0) + count
    events.sort(key=lambda e: (e.step, e.rank))
    merged = RecompileReport(reports[0].backend if reports else "", max((r.steps for r in reports), default=0),
                             list(modules.values()), events, None,
                             dropped_events=sum(r.dropped_events for r in reports), counts=counts)
    merged.per_rank = {(r.rank if r.rank is not None else i): r for i, r in enumerate(reports)}
    return merged


def _format_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    # The last column is free text: do not pad it.

    def line(cells):
        padded = [c.ljust(widths[i]) for i, c in enumerate(cells[:-1])] + [cells[-1]]
        return "| " + " | ".join(padded).rstrip()
    rule = "|" + "|".join("-" * (w + 2) for w in widths[:-1]) + "|" + "-" * (widths[-1] + 2)
    return "\n".join([line(header), rule] + [line(r) for r in rows])
