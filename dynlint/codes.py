"""The rule catalogue: fixed codes, names and one-line summaries.

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

    @property
    def url(self) -> str:
        return DOCS_URL.format(code=self.code)


_TABLE = [
    ("DYN000", "parse-error", "A file that cannot be read or parsed"),
    ("DYN101", "boolean-mask-index", "Boolean-mask indexing has a data-dependent output shape"),
    ("DYN102", "nonzero", "nonzero/argwhere/one-argument where have a data-dependent output shape"),
    ("DYN103", "unique", "unique/unique_consecutive have a data-dependent output shape"),
    ("DYN104", "masked-select", "masked_select has a data-dependent output shape"),
    ("DYN105", "dynamic-output-op", "An op whose output shape depends on tensor values"),
    ("DYN201", "size-dependent-branch", "A branch on a tensor's size specializes the graph"),
    ("DYN202", "data-dependent-branch", "A branch on tensor values breaks the graph"),
    ("DYN203", "size-dependent-loop", "A loop over a tensor's size is unrolled per size"),
    ("DYN301", "host-sync", "Copying a tensor value to the host syncs and breaks the graph"),
    ("DYN302", "data-dependent-size", "A size computed from tensor data makes shapes data-dependent"),
    ("DYN401", "dataloader-partial-batch", "DataLoader keeps a short last batch"),
    ("DYN402", "pad-to-longest", "Padding to the longest item gives one shape per batch"),
    ("DYN501", "compile-dynamic-true", "torch.compile(dynamic=True) compiles everything dynamic"),
]

RULES: dict[str, RuleInfo] = {code: RuleInfo(code, name, summary) for code, name, summary in _TABLE}
ALL_CODES: tuple[str, ...] = tuple(RULES)


def expand_selector(selector: str) -> list[str]:
    """Codes matched by a selector: a full code, a prefix ("DYN1", "DYN"), or "ALL"."""
    selector = selector.strip().upper()
    if selector == "ALL":
        return list(ALL_CODES)
    return [code for code in ALL_CODES if code.startswith(selector)]
