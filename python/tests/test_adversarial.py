"""A fast subset of the adversarial pass (scripts/adversarial.py, every 10th case): bad or
edge input across the CLI and the Python API is run or refused with a one-line error naming
it, never a panic, an abort, a hang or a silent accept. The whole pass (600+ cases) is
``.venv/bin/python scripts/adversarial.py`` (docs/robustness.md)."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("adversarial", REPO / "scripts/adversarial.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["adversarial"] = module
    spec.loader.exec_module(module)
    return module


def test_the_quick_adversarial_pass_finds_nothing() -> None:
    adversarial = load_script()
    cases = adversarial.quick_cases()
    assert len(cases) >= 40
    assert any(c.call for c in cases) and any(c.argv for c in cases)
    outcomes = adversarial.run_cases(cases)
    assert len(outcomes) == len(cases)
    bad = [f"{o.kind}: {o.case.name}: {o.detail}" for o in outcomes if o.kind in adversarial.BAD]
    assert not bad, "\n".join(bad)
    unexpected = [o.case.name for o in outcomes if o.kind == "unexpected-refusal"]
    assert not unexpected, unexpected
