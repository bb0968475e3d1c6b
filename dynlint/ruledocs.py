"""Rule documents: find, load and parse ``rules/CODE.md``.

The documents ship inside the wheel as the package data directory
``dynlint/rules`` (pyproject's hatch ``force-include``).  In an editable install
or a plain checkout that directory does not exist, and the repository's
top-level ``rules/`` is used instead.  Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from dynlint.codes import RULES, RuleInfo

if TYPE_CHECKING:  # importlib.abc.Traversable moved in 3.11 and is deprecated there in 3.12+
    from importlib.resources.abc import Traversable

REQUIRED_SECTIONS = ("What it does", "Where it reports", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")

_TITLE_RE = re.compile(r"^#\s+(?P<code>[A-Z]+[0-9]+):\s*(?P<name>[a-z0-9-]+)\s*$")
_SECTION_RE = re.compile(r"^##\s+(?P<title>.+?)\s*$")
_PYTHON_BLOCK_RE = re.compile(r"^```python[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


class RuleDocError(Exception):
    """A rule document is missing or malformed."""


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    summary: str
    text: str
    sections: dict[str, str] = field(default_factory=dict)

    def python_block(self, section: str) -> str | None:
        """The first ```python block of a section, or None."""
        body = self.sections.get(section)
        if body is None:
            return None
        match = _PYTHON_BLOCK_RE.search(body)
        return match.group("body") if match else None

    @property
    def example(self) -> str | None:
        return self.python_block("Example")

    @property
    def use_instead(self) -> str | None:
        return self.python_block("Use instead")


def rules_dir() -> Traversable:
    """The directory holding the rule documents (package data first, then the checkout)."""
    try:
        packaged = resources.files("dynlint") / "rules"
        if packaged.is_dir():
            return packaged
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - odd loaders
        pass
    checkout = Path(__file__).resolve().parent.parent / "rules"
    if checkout.is_dir():
        return checkout
    raise RuleDocError("rule documents not found (neither dynlint/rules nor the checkout's rules/)")


def resolve_code(code_or_name: str) -> RuleInfo | None:
    """A rule by code (any case, e.g. ``dyn101``) or by name (``boolean-mask-index``)."""
    key = code_or_name.strip()
    info = RULES.get(key.upper())
    if info is not None:
        return info
    lowered = key.lower().replace("_", "-")
    for info in RULES.values():
        if info.name == lowered:
            return info
    return None


def doc_text(code: str) -> str:
    entry = rules_dir() / f"{code}.md"
    try:
        return entry.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise RuleDocError(f"no document for {code}: {exc}") from None


def parse_doc(text: str) -> RuleDoc:
    """Split a document into its title, summary paragraph and ``##`` sections."""
    lines = text.splitlines()
    if not lines:
        raise RuleDocError("empty rule document")
    title = _TITLE_RE.match(lines[0])
    if title is None:
        raise RuleDocError(f"first line must be '# CODE: name', got {lines[0]!r}")

    summary_lines: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_fence = False
    for line in lines[1:]:
        if line.startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _SECTION_RE.match(line)
        if heading:
            current = sections.setdefault(heading.group("title"), [])
            continue
        if current is not None:
            current.append(line)
        elif line.strip():
            summary_lines.append(line.strip())
        elif summary_lines:
            current = []  # the summary is one paragraph; ignore anything before the first section
    return RuleDoc(
        code=title.group("code"),
        name=title.group("name"),
        summary=" ".join(summary_lines),
        text=text,
        sections={name: "\n".join(body).strip("\n") + "\n" for name, body in sections.items()},
    )


def load_doc(code: str) -> RuleDoc:
    return parse_doc(doc_text(code))
