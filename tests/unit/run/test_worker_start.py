"""The early start's guess of how many questions a run has (``run/workers/start.py``), against what
the dataset readers then load from the same files, written as their producers write them."""

from __future__ import annotations

import json
from pathlib import Path

from google.adk.evaluation.eval_case import EvalCase, Invocation
from google.adk.evaluation.eval_set import EvalSet
from google.genai import types

from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.run.workers.start import BYTES_PER_QUESTION, estimated_question_runs
from agent_eval_action.system.processes import agent_workers

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "customer_service" / "evaluation" / "datasets" / "customer_service_golden.json"


def questions(path: Path) -> int:
    """What the reader loads from ``path`` (the tests work in their tmp_path: ``in_tmp``)."""
    return sum(isinstance(item, Record) for item in load_dataset(str(path)).records)


def test_a_golden_file_indented_as_people_and_json_dumps_write_it_is_counted_not_sized(in_tmp: Path) -> None:
    example = in_tmp / EXAMPLE.name  # the bundled example, indented by hand
    example.write_bytes(EXAMPLE.read_bytes())
    forty = in_tmp / "forty_golden.json"
    items = [{**question, "id": f"q{i}"} for i, question in enumerate(json.loads(EXAMPLE.read_text())["golden_questions"] * 5)]
    forty.write_text(json.dumps({"golden_questions": items}, indent=2))
    for path in (example, forty):
        assert estimated_question_runs([str(path)], None) == questions(path)
        # By size alone, what the guess was: about four times as many (20 such questions were
        # guessed 78: two workers, of which the plan then killed one).
        assert path.stat().st_size // BYTES_PER_QUESTION > 3 * questions(path)
    assert estimated_question_runs([str(example), str(forty)], 3) == 3 * 48
    assert agent_workers(0, estimated_question_runs([str(forty)], None)) == agent_workers(0, 40)


def test_an_eval_set_as_adk_writes_it_is_counted_by_its_cases(in_tmp: Path) -> None:
    def turn(text: str) -> Invocation:
        return Invocation(user_content=types.Content(role="user", parts=[types.Part(text=text)]))

    cases = [EvalCase(eval_id=f"case_{i}", conversation=[turn("Hi"), turn("What's in my cart?")]) for i in range(12)]
    path = in_tmp / "shop.evalset.json"
    # As google.adk.evaluation.local_eval_sets_manager writes an eval set.
    path.write_text(EvalSet(eval_set_id="shop", eval_cases=cases).model_dump_json(indent=2, exclude_unset=True, exclude_none=True))
    assert questions(path) == 12
    assert estimated_question_runs([str(path)], None) == 12


def test_other_files_are_guessed_from_their_size_and_what_is_not_a_file_is_not_guessed(tmp_path: Path) -> None:
    rows = tmp_path / "questions.csv"
    rows.write_text("question_id,user_inputs\n" + "".join(f"q{i},Hi\n" for i in range(500)))
    assert estimated_question_runs([str(rows)], 2) == rows.stat().st_size // BYTES_PER_QUESTION * 2
    keyless = tmp_path / "keyless.json"
    keyless.write_text(json.dumps({"something": "else" * 200}))
    assert estimated_question_runs([str(keyless)], None) == keyless.stat().st_size // BYTES_PER_QUESTION
    assert estimated_question_runs([str(tmp_path)], None) is None
    assert estimated_question_runs([str(tmp_path / "*.json")], None) is None
    assert estimated_question_runs([], None) is None


def test_the_early_start_launches_the_zygote_before_asyncio_is_imported(tmp_path: Path) -> None:
    """The command line's early start (``evaluate --agent``) starts the warm start's zygote before
    it imports asyncio (some 20 ms: the zygote's own second of imports starts that much sooner),
    then adopts it on the loop the run will use. In a fresh interpreter, without the suite's
    template (this process has asyncio, and the template would fork the zygote)."""
    import os
    import subprocess
    import sys

    (tmp_path / "golden.json").write_text(json.dumps({"golden_questions": [{"id": "q1", "user_inputs": ["hi"]}]}))
    code = (
        "import subprocess, sys\n"
        "launched = []\n"
        "class Watched(subprocess.Popen):\n"
        "    def __init__(self, args, **kwargs):\n"
        "        launched.append(('asyncio' in sys.modules, args[1:]))\n"
        "        super().__init__(args, **kwargs)\n"
        "subprocess.Popen = Watched\n"
        "from agent_eval_action.service.early_start import start_agent_early\n"
        "start_agent_early('app:root_agent', python=None, model_cache=None, workers=None, paths=['golden.json'], runs=None)\n"
        "from agent_eval_action.run.workers import start\n"
        "early = start._early\n"
        "print(launched, early is not None and early.zygote is not None and early.zygote.process.pid > 0)\n"
        "start.discard()\n"
    )
    env = {name: value for name, value in os.environ.items() if name != "AGENT_EVAL_ZYGOTE_TEMPLATE"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[(False, ['-m', 'agent_eval_worker'])] True", done.stdout + done.stderr
