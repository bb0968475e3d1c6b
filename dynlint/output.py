"""Output formats of ``dynlint check``.

A reporter receives one ``FileResult`` at a time (so output streams while
files are checked) and counts as it goes; ``finish`` writes the summary.
Text formats (full, concise) end with a ruff-like summary line; the machine
formats (json, github, sarif) write nothing but their document.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections import Counter
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from dynlint import __version__
from dynlint.codes import RULES
from dynlint.config import Settings
from dynlint.diagnostics import Applicability, FileResult, Finding  # noqa: F401 - FileResult re-exported

FORMATS = ("full", "concise", "json", "github", "sarif")
STATISTICS_FORMATS = ("full", "concise", "json")  # a per-rule table has no github/sarif form (ruff refuses too)
INFORMATION_URI = "https://github.com/dynlint/dynlint"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FIX_COMMAND = "dynlint fix"


def position_text(result: FileResult, line: int, col: int) -> str:
    """``line:col`` (1-based column), or ``cell N:line:col`` in a notebook (line within the cell)."""
    cell, row = result.locate(line)
    return f"{row}:{col + 1}" if cell is None else f"cell {cell}:{row}:{col + 1}"


def location_text(result: FileResult, finding: Finding) -> str:
    """``path:line:col`` / ``path:cell N:line:col``: where a finding is, as every text output shows it."""
    return f"{result.path}:{position_text(result, finding.line, finding.col)}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class Reporter:
    """Base: counts findings; subclasses write them."""

    def __init__(self, stream: TextIO, settings: Settings, *, unsafe_fixes: bool = False, quiet: bool = False):
        self.stream = stream
        self.settings = settings
        self.unsafe_fixes = unsafe_fixes
        self.quiet = quiet
        self.total = 0
        self.files_with_findings = 0
        self.files_checked = 0
        self.fixable = 0          # fixes `dynlint fix` would apply with the current flags
        self.hidden_fixes = 0     # unsafe fixes, applied only with --unsafe-fixes
        self.by_code: Counter[str] = Counter()
        self.fixable_codes: set[str] = set()
        self.fixes_by_code: dict[str, Counter[str]] = {}  # code -> {"safe": n, "unsafe": m}

    def applies(self, finding: Finding) -> bool:
        """Whether ``dynlint fix`` (with the current flags) would apply this finding's fix."""
        fix = finding.fix
        return fix is not None and (fix.applicability == Applicability.SAFE or self.unsafe_fixes)

    def start(self) -> None:
        pass

    def add(self, result: FileResult) -> None:
        self.files_checked += 1
        if result.findings:
            self.files_with_findings += 1
        for finding in result.findings:
            self.total += 1
            self.by_code[finding.code] += 1
            if self.applies(finding):
                self.fixable += 1
                self.fixable_codes.add(finding.code)
            elif finding.fix is not None:
                self.hidden_fixes += 1
            if finding.fix is not None:
                self.fixes_by_code.setdefault(finding.code, Counter())[finding.fix.applicability.value] += 1
        self.write(result)

    def write(self, result: FileResult) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        pass

    # Shared by the text formats.
    def header(self, result: FileResult, finding: Finding) -> str:
        marker = "[*] " if self.applies(finding) else ""
        return f"{location_text(result, finding)}: {finding.code} {marker}{finding.message}"

    def summary_lines(self) -> list[str]:
        if self.files_checked == 0:
            return []  # nothing was checked (the command warned on stderr): nothing "passed" either
        if self.total == 0:
            return ["All checks passed!"]
        lines = [f"Found {_plural(self.total, 'finding')} in {_plural(self.files_with_findings, 'file')}."]
        command = FIX_COMMAND + (" --unsafe-fixes" if self.unsafe_fixes else "")
        hidden = f" ({self.hidden_fixes} more with `--unsafe-fixes`)" if self.hidden_fixes else ""
        if self.fixable:
            lines.append(f"[*] {self.fixable} fixable with `{command}`{hidden}.")
        elif self.hidden_fixes:
            lines.append(f"No safe fixes available{hidden}.")
        return lines


class ConciseReporter(Reporter):
    def write(self, result: FileResult) -> None:
        for finding in result.findings:
            self.stream.write(self.header(result, finding) + "\n")

    def finish(self) -> None:
        if not self.quiet:
            self.stream.write("".join(line + "\n" for line in self.summary_lines()))


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _display(text: str) -> tuple[str, list[int]]:
    """Text with tabs expanded to 4 columns, and the display column of every character offset."""
    shown = []
    columns = [0]
    for char in text:
        if char == "\t":
            width = 4 - columns[-1] % 4
            shown.append(" " * width)
        else:
            width = _char_width(char)
            shown.append(char)
        columns.append(columns[-1] + width)
    return "".join(shown), columns


class FullReporter(ConciseReporter):
    """``path:line:col: CODE message``, then the source line with a caret under the span."""

    def write(self, result: FileResult) -> None:
        for finding in result.findings:
            self.stream.write(self.header(result, finding) + "\n")
            source = result.lines.get(finding.line)
            if source is not None:
                self.stream.write(self.snippet(finding, source, result.locate(finding.line)[1]))
            self.stream.write("\n")

    def snippet(self, finding: Finding, source: str, row: int | None = None) -> str:
        """The source line (numbered ``row``: the line within its notebook cell, else the file's)
        with a caret under the finding's span."""
        row = finding.line if row is None else row
        source = source.rstrip("\r\n")
        shown, columns = _display(source)
        start = min(finding.col, len(source))
        end = finding.end_col if finding.end_line == finding.line else len(source)
        end = max(start, min(end, len(source)))
        pad = columns[start]
        width = max(1, columns[end] - columns[start])
        gutter = " " * len(str(row))
        lines = [
            f"{gutter} |",
            f"{row} | {shown}".rstrip(),
            f"{gutter} | {' ' * pad}{'^' * width} {finding.code}",
            f"{gutter} |",
        ]
        if finding.region:
            from dynlint.analysis.regions import LABELS

            lines.append(f"{gutter} = runs in: {LABELS.get(finding.region, finding.region)}")
        if finding.fix is not None:
            lines.append(f"{gutter} = help: {finding.fix.message}")
        return "\n".join(lines) + "\n"


def finding_to_json(finding: Finding, path: str, result: FileResult | None = None) -> dict:
    """One finding in ruff's JSON shape.  In a notebook, ``cell`` is the 1-based cell number and
    every row (location, end, noqa row, fix edits) counts from the start of that cell, as in ruff."""
    rule = RULES.get(finding.code)
    locate = result.locate if result is not None else (lambda line: (None, line))
    cell, row = locate(finding.line)

    def point(line: int, col: int) -> dict:
        return {"row": locate(line)[1], "column": col + 1}

    fix = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.applicability.value,
            "message": finding.fix.message,
            "edits": [{"content": e.content, "location": point(e.line, e.col),
                       "end_location": point(e.end_line, e.end_col)} for e in finding.fix.edits],
        }
    return {
        "cell": cell,
        "code": finding.code,
        "end_location": point(finding.end_line, finding.end_col),
        "filename": path,
        "fix": fix,
        "location": {"row": row, "column": finding.col + 1},
        "message": finding.message,
        "noqa_row": row,
        "region": finding.region or None,
        "url": rule.url if rule else None,
    }


def _indent(text: str, spaces: int) -> str:
    prefix = " " * spaces
    return "\n".join(prefix + line for line in text.splitlines())


class _StreamedArray:
    """Writes a JSON array one element at a time (valid JSON when finished)."""

    def __init__(self, stream: TextIO, depth: int):
        self.stream = stream
        self.depth = depth
        self.count = 0

    def append(self, item: dict) -> None:
        self.stream.write(",\n" if self.count else "\n")
        self.stream.write(_indent(json.dumps(item, indent=2, ensure_ascii=False), 2 * (self.depth + 1)))
        self.count += 1

    def close_text(self) -> str:
        return "\n" + " " * (2 * self.depth) + "]" if self.count else "]"


class JsonReporter(Reporter):
    """Ruff-compatible JSON list; ``filename`` is the path as given on the command line."""

    def start(self) -> None:
        self.stream.write("[")
        self.array = _StreamedArray(self.stream, 0)

    def write(self, result: FileResult) -> None:
        for finding in result.findings:
            self.array.append(finding_to_json(finding, result.path, result))

    def finish(self) -> None:
        self.stream.write(self.array.close_text() + "\n")


def _escape_github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_github_property(text: str) -> str:
    return _escape_github_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    """GitHub Actions workflow commands: one ``::error`` annotation per finding."""

    def write(self, result: FileResult) -> None:
        for f in result.findings:
            props = [
                f"title={_escape_github_property(f'dynlint ({f.code})')}",
                f"file={_escape_github_property(result.path)}",
            ]
            message = f"{f.code} {f.message}"
            if result.cells:
                # Lines of a notebook's JSON are not its code lines: a file-level annotation
                # that says where in which cell.
                message = f"{position_text(result, f.line, f.col)}: {message}"
            else:
                props += [f"line={f.line}", f"col={f.col + 1}", f"endLine={f.end_line}", f"endColumn={f.end_col + 1}"]
            self.stream.write(f"::error {','.join(props)}::{_escape_github_data(message)}\n")


def sarif_rules() -> list[dict]:
    return [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "helpUri": rule.url,
            "defaultConfiguration": {"level": "error"},
        }
        for rule in RULES.values()
    ]


class SarifReporter(Reporter):
    """SARIF 2.1.0; artifact URIs are relative to the project root (``%SRCROOT%``)."""

    def start(self) -> None:
        self.rule_index = {code: i for i, code in enumerate(RULES)}
        self.root_uri = Path(os.path.abspath(self.settings.root)).as_uri().rstrip("/") + "/"
        placeholder = "__dynlint_results__"
        document = {
            "$schema": SARIF_SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "dynlint",
                    "version": __version__,
                    "informationUri": INFORMATION_URI,
                    "rules": sarif_rules(),
                }},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": self.root_uri}},
                "columnKind": "unicodeCodePoints",
                "results": placeholder,
            }],
        }
        text = json.dumps(document, indent=2, ensure_ascii=False)
        self.tail = text[text.index(f'"{placeholder}"') + len(placeholder) + 2:]
        self.stream.write(text[:text.index(f'"{placeholder}"')] + "[")
        self.array = _StreamedArray(self.stream, 3)

    def artifact(self, result: FileResult) -> dict:
        rel = result.relpath
        if rel.startswith("../") or rel == ".." or os.path.isabs(rel):
            return {"uri": Path(os.path.abspath(result.path)).as_uri()}
        return {"uri": quote(rel), "uriBaseId": "%SRCROOT%"}

    @staticmethod
    def region(line: int, col: int, end_line: int, end_col: int) -> dict:
        return {"startLine": line, "startColumn": col + 1, "endLine": end_line, "endColumn": end_col + 1}

    def write(self, result: FileResult) -> None:
        location = self.artifact(result)
        for f in result.findings:
            physical = {"artifactLocation": location, "region": self.region(f.line, f.col, f.end_line, f.end_col)}
            message = f.message
            properties = None
            if result.cells:
                # A region would point into the notebook's JSON text: the cell and its lines go in
                # the message and the properties instead (and no fix: it is not a JSON edit).
                cell, row = result.locate(f.line)
                del physical["region"]
                message = f"{position_text(result, f.line, f.col)}: {message}"
                properties = {"cell": cell,
                              "cellRegion": self.region(row, f.col, result.locate(f.end_line)[1], f.end_col)}
            item = {
                "ruleId": f.code,
                "level": "error",
                "message": {"text": message},
                "locations": [{"physicalLocation": physical}],
            }
            if f.region:
                properties = {**(properties or {}), "region": f.region}
            if properties is not None:
                item["properties"] = properties
            if f.code in self.rule_index:
                item["ruleIndex"] = self.rule_index[f.code]
            if f.fix is not None and not result.cells:
                item["fixes"] = [{
                    "description": {"text": f"{f.fix.message} ({f.fix.applicability.value})"},
                    "artifactChanges": [{
                        "artifactLocation": location,
                        "replacements": [
                            {"deletedRegion": self.region(e.line, e.col, e.end_line, e.end_col),
                             "insertedContent": {"text": e.content}}
                            for e in f.fix.edits
                        ],
                    }],
                }]
            self.array.append(item)

    def finish(self) -> None:
        self.stream.write(self.array.close_text() + self.tail + "\n")


class StatisticsReporter(Reporter):
    """``--statistics``: counts per code instead of the findings (JSON for --output-format json)."""

    def __init__(self, *args, as_json: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.as_json = as_json

    def write(self, result: FileResult) -> None:
        pass

    def rows(self) -> list[tuple[str, int]]:
        return sorted(self.by_code.items(), key=lambda item: (-item[1], item[0]))

    def finish(self) -> None:
        if self.as_json:
            table = []
            for code, count in self.rows():
                fixes = self.fixes_by_code.get(code, Counter())
                table.append({
                    "code": code, "name": RULES[code].name if code in RULES else None, "count": count,
                    # as in ruff: whether `dynlint fix` applies some of them with the flags given
                    "fixable": code in self.fixable_codes,
                    # which fixes exist at all, by applicability (unsafe ones need --unsafe-fixes)
                    "fixes": {"safe": fixes[Applicability.SAFE.value], "unsafe": fixes[Applicability.UNSAFE.value]},
                })
            self.stream.write(json.dumps(table, indent=2) + "\n")
            return
        rows = self.rows()
        if rows:
            width = max(len(str(count)) for _, count in rows)
            any_fixable = bool(self.fixable_codes)
            for code, count in rows:
                marker = ("[*] " if code in self.fixable_codes else "[ ] ") if any_fixable else ""
                name = RULES[code].name if code in RULES else ""
                self.stream.write(f"{count:>{width}}  {code}  {marker}{name}\n")
        if not self.quiet:
            self.stream.write("".join(line + "\n" for line in self.summary_lines()))


_REPORTERS = {
    "full": FullReporter,
    "concise": ConciseReporter,
    "json": JsonReporter,
    "github": GithubReporter,
    "sarif": SarifReporter,
}


def make_reporter(output_format: str, stream: TextIO, settings: Settings, *, statistics: bool = False,
                  unsafe_fixes: bool = False, quiet: bool = False) -> Reporter:
    if statistics:
        if output_format not in STATISTICS_FORMATS:
            raise ValueError(f"--statistics cannot be printed as {output_format}")
        return StatisticsReporter(stream, settings, unsafe_fixes=unsafe_fixes, quiet=quiet,
                                  as_json=output_format == "json")
    return _REPORTERS[output_format](stream, settings, unsafe_fixes=unsafe_fixes, quiet=quiet)
