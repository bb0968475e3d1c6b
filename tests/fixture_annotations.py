"""Semgrep-style annotations of fixture files, and checking them against dynlint's findings.

A comment line annotates the next *code* line (the next line that is neither
blank nor a comment); several annotations may be stacked above one line:

* ``# ruleid: DYN301`` — exactly one DYN301 finding on that line (N identical
  ``ruleid`` annotations stacked above a line: exactly N findings);
* ``# ok: DYN301`` — no DYN301 finding there;
* ``# todoruleid: DYN301`` — a DYN301 finding is expected *one day* (issue
  text says so) but must NOT be reported today: when the analysis learns it,
  the test fails and asks for the annotation to be promoted to ``ruleid``;
* ``# todook: DYN301`` — a judged false alarm still reported today: at least
  one finding must be there now; when it goes, promote it to ``ok``;
* ``# region: compiled`` — the line has findings (with ``--include-host``) and
  every one of them runs in that region (compiled, training, host, unknown);
* ``# todoregion: host`` — the region the issue expects, not the one given today:
  the line has findings and not all of them are in that region yet.

Lines annotated ``# region: host`` are checked with ``--include-host`` settings
(host findings are hidden by default: the test also checks that the default
run hides them); every other line with the default settings.

Files of multi-file fixture projects (``tests/fixtures/projects``) can say how a
line reads when the file is checked *alone* (without the rest of its project):
``# alone-ruleid:``, ``# alone-ok:``, ``# alone-todoruleid:``, ``# alone-todook:``
replace that line's project annotations for their code, and ``# alone-region:``
/ ``# alone-todoregion:`` give its region; project regions are not checked alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from dynlint.analysis.regions import REGIONS
from dynlint.checks import Scope, load_all
from dynlint.codes import RULES
from dynlint.config import Settings
from dynlint.diagnostics import Finding
from dynlint.runner import iter_results

CODE_KINDS = ("ruleid", "ok", "todoruleid", "todook")
REGION_KINDS = ("region", "todoregion")
_KINDS = CODE_KINDS + REGION_KINDS
_ANNOTATION_RE = re.compile(
    r"^\s*#\s*(?P<alone>alone-)?(?P<kind>" + "|".join(sorted(_KINDS, key=len, reverse=True))
    + r")\s*:\s*(?P<value>[A-Za-z]+[0-9]*)\s*$")

# every rule, the opt-in ones (DYN204, DYN205) too: a fixture says which rule flags a line
DEFAULT = Settings(select=frozenset(RULES))
INCLUDE_HOST = replace(DEFAULT, include_host=True)
HOST = "host"


@dataclass(frozen=True)
class Annotation:
    kind: str          # one of _KINDS
    value: str         # a code (DYN301) or a region name
    comment_line: int
    target_line: int   # 1-based line the annotation is about
    alone: bool = False


def parse_annotations(text: str) -> list[Annotation]:
    lines = text.splitlines()
    annotations: list[Annotation] = []
    pending: list[tuple[str, str, int, bool]] = []
    for number, line in enumerate(lines, start=1):
        match = _ANNOTATION_RE.match(line)
        if match:
            kind = match.group("kind")
            value = match.group("value").upper() if kind in CODE_KINDS else match.group("value")
            pending.append((kind, value, number, bool(match.group("alone"))))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        annotations.extend(Annotation(kind, value, at, number, alone) for kind, value, at, alone in pending)
        pending = []
    if pending:
        raise AssertionError(f"annotations at the end of the file point at no code line: {pending}")
    return annotations


def malformed(annotations: list[Annotation]) -> list[str]:
    """Unknown codes or regions, and contradictions on one line."""
    problems = []
    for ann in annotations:
        if ann.kind in CODE_KINDS and ann.value not in RULES:
            problems.append(f"line {ann.comment_line}: unknown code {ann.value}")
        if ann.kind in REGION_KINDS and ann.value not in REGIONS:
            problems.append(f"line {ann.comment_line}: unknown region {ann.value} (one of {', '.join(REGIONS)})")
    kinds: dict[tuple, set] = {}
    for ann in annotations:
        key = (ann.target_line, ann.alone, ann.value if ann.kind in CODE_KINDS else "<region>")
        kinds.setdefault(key, set()).add(ann.kind)
    for ann in annotations:
        same = [a for a in annotations if (a.kind, a.value, a.target_line, a.alone)
                == (ann.kind, ann.value, ann.target_line, ann.alone)]
        if len(same) > 1 and ann.kind != "ruleid" and ann is same[0]:
            problems.append(f"line {ann.target_line}: `{ann.kind}: {ann.value}` repeated")
    for (line, alone, what), found in sorted(kinds.items(), key=str):
        if len(found) > 1 or (what == "<region>" and len([a for a in annotations if a.target_line == line
                                                          and a.alone == alone and a.kind in REGION_KINDS]) > 1):
            problems.append(f"line {line}: conflicting annotations {sorted(found)} for {what}")
    return problems


def run(paths: list[Path], root: Path, settings: Settings) -> dict[str, list[Finding]]:
    """Findings per file (keyed by its path relative to ``root``), the files checked as one project
    through the real pipeline (module names from the files' packages, the project pass, regions)."""
    files = [(str(path), path.relative_to(root).as_posix()) for path in paths]
    return {result.relpath: list(result.findings) for result in iter_results(files, settings, jobs=1)}


def effective(annotations: list[Annotation], alone: bool) -> list[Annotation]:
    """The annotations that hold in one mode: the project's, or the file-alone reading
    (``alone-*`` annotations replace the project's for their code; regions only from ``alone-*``)."""
    if not alone:
        return [a for a in annotations if not a.alone]
    overridden = {(a.target_line, a.value) for a in annotations if a.alone and a.kind in CODE_KINDS}
    kept = []
    for ann in annotations:
        if ann.alone:
            kept.append(ann)
        elif ann.kind in CODE_KINDS and (ann.target_line, ann.value) not in overridden:
            kept.append(ann)
    return kept


def check(name: str, text: str, default: list[Finding], with_host: list[Finding], *, alone: bool = False,
          strict_codes: frozenset[str] | None = None, strict_with_host: bool = True) -> list[str]:
    """Problems of one file's findings against its annotations.

    ``default``/``with_host``: the file's findings with the default settings and with
    include-host.  ``strict_codes``: codes that may not be reported on a line that does not
    expect them (None: every code), among the include-host findings (``strict_with_host``)
    or the default ones."""
    source_lines = text.splitlines()
    annotations = effective(parse_annotations(text), alone)
    region_of_line = {a.target_line: a.value for a in annotations if a.kind == "region"}
    if alone:
        # with alone-region missing, a line keeps the run its project region asked for
        for ann in parse_annotations(text):
            if ann.kind == "region" and not ann.alone:
                region_of_line.setdefault(ann.target_line, ann.value)
    scope = {code: rule.scope for code, rule in load_all().items()}

    def on(findings, line, code=None):
        return [f for f in findings if f.line == line and (code is None or f.code == code)]

    def where(line):
        mode = " (file checked alone)" if alone else ""
        return f"{name}:{line}{mode}: {source_lines[line - 1].strip()}"

    expected_count: dict[tuple[int, str], int] = {}
    for ann in annotations:
        if ann.kind == "ruleid":
            expected_count[(ann.target_line, ann.value)] = expected_count.get((ann.target_line, ann.value), 0) + 1
    problems = []
    seen = set()
    for ann in annotations:
        if (ann.kind, ann.value, ann.target_line) in seen:
            continue
        seen.add((ann.kind, ann.value, ann.target_line))
        line = ann.target_line
        host_line = region_of_line.get(line) == HOST
        findings = with_host if host_line else default
        if ann.kind in CODE_KINDS:
            found = on(findings, line, ann.value)
            count = expected_count.get((line, ann.value), 0)
            if ann.kind == "ruleid" and len(found) != count:
                wanted = "exactly one" if count == 1 else f"{count}"
                problems.append(f"expected {wanted} {ann.value}, got {len(found)}  ({where(line)})")
            elif ann.kind == "ok" and found:
                problems.append(f"unexpected {ann.value}: {found[0].message}  ({where(line)})")
            elif ann.kind == "todoruleid" and found:
                problems.append(f"{ann.value} is reported now: promote `todoruleid` to `ruleid`  ({where(line)})")
            elif ann.kind == "todook" and not found:
                problems.append(f"{ann.value} is no longer reported: promote `todook` to `ok`  ({where(line)})")
            continue
        found = on(with_host, line)
        if not found:
            problems.append(f"`{ann.kind}: {ann.value}` on a line without findings  ({where(line)})")
            continue
        regions = sorted({f.region for f in found})
        if ann.kind == "region":
            if regions != [ann.value]:
                problems.append(f"expected region {ann.value}, got {regions}  ({where(line)})")
            elif ann.value == HOST:
                shown = [f.code for f in on(default, line) if scope.get(f.code) is Scope.DEVICE]
                if shown:
                    problems.append(f"host-only findings {shown} shown without include-host  ({where(line)})")
        elif regions == [ann.value]:
            problems.append(f"region is {ann.value} now: promote `todoregion` to `region`  ({where(line)})")

    expected = {(a.target_line, a.value) for a in annotations if a.kind in ("ruleid", "todook")}
    for finding in with_host if strict_with_host else default:
        if strict_codes is not None and finding.code not in strict_codes:
            continue
        if (finding.line, finding.code) not in expected:
            problems.append(f"unannotated {finding.code} [{finding.region}]: {finding.message}  "
                            f"({where(finding.line)})")
    return problems


def default_view(with_host: list[Finding]) -> list[Finding]:
    """What the default settings must report, derived from the include-host findings:
    device hazards in host-only code are left out."""
    scope = {code: rule.scope for code, rule in load_all().items()}
    return [f for f in with_host if not (scope.get(f.code) is Scope.DEVICE and f.region == HOST)]
