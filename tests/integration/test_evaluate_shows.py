"""What `evaluate` prints of a failing run: what it did against what its question expects (the
lines the comment shows of a run that needs a look), and every reason a metric went unscored.
It printed "failed q_trading_01: trajectory_accuracy, ..." with nothing to see, and
"response_match_score: unscored (no reference response)" though half the runs had one."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.commands import run_cli
from tests.helpers.factories import runs, write_dataset

ROOT = Path(__file__).resolve().parents[2]


def test_a_failing_run_shows_what_it_did_against_what_was_expected(tmp_path: Path) -> None:
    write_dataset(tmp_path / "cs_runs.csv", runs(n=4, broken={0}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    done = run_cli(["evaluate", "cs_runs.csv", "--output-dir", "out"], cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    start = lines.index("  failed q_care_01_03: tool_call_precision")
    assert lines[start : start + 4] == [
        "  failed q_care_01_03: tool_call_precision",
        "    unexpected call get_product_recommendations",
        "  failed q_cart_01_00: tool_usage_accuracy, tool_call_precision",
        "    access_cart_information: customer_id: expected '123', got '999'",
    ]
    broken = next(i for i, line in enumerate(lines) if line.startswith("  failed q_discount_02_02: state_management_fidelity"))
    assert lines[broken + 1 : broken + 5] == [
        '    missing call access_cart_information with {"customer_id":"123"}',
        "    generate_qr_code: discount_value: expected 10, got 15",
        "    state discount_value: expected 10, got 15",
        "    trajectory: expected customer_service → promotions_agent → access_cart_information → generate_qr_code, "
        "got customer_service → promotions_agent → generate_qr_code",
    ]
    # Two runs have a reference response and two have none: both reasons, each with its count.
    assert (
        "  response_match_score: unscored (no per-turn reference responses from ADK's eval data "
        "(response_match scores this reference): 2 runs; no reference response: 2 runs)"
    ) in lines
