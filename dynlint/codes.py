"""The rule catalogue: codes, names and one-line summaries, as the rule units declare them
(``dynlint.checks``), plus DYN000 for files that cannot be checked.

Rule *documents* live in ``rules/CODE.md`` (shipped as ``dynlint/rules`` in the
wheel); a test checks that they agree with this table.
"""

from __future__ import annotations

from dataclasses import dataclass

DOCS_URL = "https://github.com/dynlint/dynlint/blob/main/rules/{code}.md"


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    #: where its findings are reported (``dynlint.checks.Scope`` value; "anywhere" for DYN000)
    scope: str = "anywhere"
    #: not in the default selection: reported only when selected by code or prefix
    opt_in: bool = False

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)


def _catalogue() -> dict[str, RuleInfo]:
    from dynlint.checks import load_all

    table = {"DYN000": RuleInfo("DYN000", "parse-error", "A file that cannot be read or parsed")}
    for code, declared in sorted(load_all().items()):
        table[code] = RuleInfo(code, declared.name, declared.summary, declared.scope.value, declared.opt_in)
    return table


RULES: dict[str, RuleInfo] = _catalogue()
ALL_CODES: tuple[str, ...] = tuple(RULES)
#: the rules a run reports when nothing is selected: all but the opt-in ones
DEFAULT_CODES: tuple[str, ...] = tuple(code for code, info in RULES.items() if not info.opt_in)
OPT_IN_CODES: tuple[str, ...] = tuple(code for code, info in RULES.items() if info.opt_in)


def expand_selector(selector: str) -> list[str]:
    """Codes matched by a selector: a full code, a prefix ("DYN1", "DYN"), or "ALL"."""
    selector = selector.strip().upper()
    if selector == "ALL":
        return list(ALL_CODES)
    return [code for code in ALL_CODES if code.startswith(selector)]
