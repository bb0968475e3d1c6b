"""The rule registry: one unit per rule, the catalogue derived from it."""

from __future__ import annotations

from pathlib import Path

from dynlint import checks
from dynlint.codes import RULES

RULE_DOCS = Path(__file__).resolve().parent.parent / "rules"


def test_every_rule_is_declared_by_its_own_unit():
    registry = checks.load_all()
    assert set(registry) == set(RULES) - {"DYN000"}
    for code, declared in registry.items():
        assert declared.module == f"dynlint.checks.{code.lower()}_{declared.name.split('-')[0]}" or \
            declared.module.startswith(f"dynlint.checks.{code.lower()}_"), (code, declared.module)
        if declared.reported_by is None:
            assert declared.handlers, f"{code} subscribes to no event"
        else:  # DYN204/DYN205: reported by the handlers of the rule whose judgement they share
            assert not declared.handlers and registry[declared.reported_by].handlers, code
        assert isinstance(declared.scope, checks.Scope)
        assert (RULE_DOCS / f"{code}.md").is_file()


def test_device_rules_are_the_dynamic_shape_rules():
    # hazards to the compiled graph are DEVICE-scoped (hidden in host-only code), COMPILED-scoped when
    # they cost nothing outside torch.compile, STEP-scoped when they matter only where a step is traced;
    # the input pipeline and compile settings are reported wherever they are
    registry = checks.load_all()
    device = {code for code, r in registry.items()
              if r.scope in (checks.Scope.DEVICE, checks.Scope.COMPILED, checks.Scope.STEP)}
    assert device == {c for c in registry if c[3] in "123"}
    assert {code for code, r in registry.items() if r.scope == checks.Scope.COMPILED} == {"DYN303"}
    # size specialization costs compiles only where a step is traced
    assert {code for code, r in registry.items() if r.scope == checks.Scope.STEP} == {"DYN201", "DYN203", "DYN204",
                                                                                   "DYN205"}
    # the opt-in rules are the size rules' companions for sizes not known to vary, and the compile setting
    # DYN501 (judged on real code: deliberate every time, never a hazard)
    assert {code for code, r in registry.items() if r.opt_in} == {"DYN204", "DYN205", "DYN501"}


def test_rules_with_fixes_are_the_documented_fixable_ones():
    # a rule's doc says "No fix." exactly when its unit has no fix builder
    for code, declared in checks.load_all().items():
        doc = (RULE_DOCS / f"{code}.md").read_text(encoding="utf-8")
        section = doc.split("## Fix safety", 1)[1].strip()
        assert section.startswith("No fix.") == (declared.fix is None), code
