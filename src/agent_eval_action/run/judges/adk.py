"""ADK's LLM-judged criteria (``final_response_match_v2``, the three rubric-based ones,
``hallucinations_v1``) computed by ADK's own evaluator classes, as ``adk eval`` computes them:
its prompts, its parsers, ``num_samples`` samples a turn decided by its majority, its rubric
filtering and aggregation, its threshold and pass/fail.

ADK's evaluation modules import the Vertex AI SDK at import time, so they run in a process of
their own (``run/judges/adk_worker.py``, under our Python). That process never calls the judge
model: it says which requests its evaluator makes, and each is asked here, through the judge
path every judge call takes (``engine.py``: the judge cache, the run's pacing, retries, the
judges' budget); the answers go back and ADK's evaluator finishes with them. A judge that could
not be reached leaves the score unscored with ``details["outage"]``: not judged, never a fail.

The run's invocations are built from our trace as ADK's eval builds them from its events: each
turn's user text, final response, its tool calls and their responses (ids made stable, so the
same run asks the same prompt and the judge cache answers it), and the eval case's and each
turn's rubrics, and each turn's system instructions and tool declarations as its requests sent
them (ADK's ``app_details``: recorded by the agent's worker as ADK's eval records them,
``agent_worker/app_details.py``, or read from a recorded run's spans,
``traces/app_details.py``). A run with neither (an ADK without plugins, a recorded run whose
spans hold no request) has none; ADK's prompts then say what ADK's own say without them (no developer instructions, "Agent
has no tools.").
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import IO, Any

from agent_eval_action.datasets.adk.config import ADK_JUDGED as JUDGED
from agent_eval_action.datasets.adk.config import ADK_VERTEX as VERTEX
from agent_eval_action.datasets.adk.eval_sets import RUBRICS, TURN_RUBRICS
from agent_eval_action.models.questions import IntermediateText, Question
from agent_eval_action.models.scores import NOT_COMPUTED, Score
from agent_eval_action.models.traces import Trace
from agent_eval_action.traces.app_details import app_details_by_turn

NOT_VIA_VERTEX = (
    "not computed: ADK computes {name} through the Vertex AI evaluation service, which needs the Vertex AI SDK "
    '("agent-eval-action[vertex]"), GOOGLE_CLOUD_PROJECT and GOOGLE_APPLICATION_CREDENTIALS'
)
NO_ADK_EVAL = (
    "not judged: ADK's evaluation modules do not import in this tool's environment ({error}): "
    "reinstall agent-eval-action there (its google-adk brings them; the action's image has them)"
)
SIMULATOR_QUALITY = "per_turn_user_simulator_quality_v1"
# Rounds of asking: hallucinations_v1 needs two (segmenter, validator), the others one.
ROUNDS = 4

# (model, config, prompt, sample index) -> the judge's text, or why there is none ("outage": ...).
Ask = Callable[[str, dict[str, Any], str, int], Awaitable["str | tuple[str, str]"]]
# A Vertex AI evaluation request of ADK's facade ({"metrics", "dataset"}) -> the service's
# EvaluationResult JSON, or why there is none.
AskVertex = Callable[[dict[str, Any]], Awaitable["str | tuple[str, str]"]]


def adk_judged_criteria(criteria: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The criteria of a dataset (its ``criterion_options``) that ADK's judged evaluators compute."""
    return {name: criteria[name] for name in (*JUDGED, *VERTEX) if name in criteria}


def vertex_score(name: str, trace: Trace) -> Score:
    """A Vertex-backed criterion's score: the one ADK recorded for the run (an eval history), else
    not computed, with the reason."""
    recorded = trace.recorded_metrics.get(f"score.{name}")
    if recorded is not None:
        return Score(value=recorded, explanation=f"ADK's recorded {name} (the eval history's)", details={"recorded_by_adk": True})
    why = NOT_VIA_VERTEX.format(name=name)
    return Score(value=None, explanation=why, details={NOT_COMPUTED: why})


class AdkJudgeWorker:
    """The process that runs ADK's evaluators: started on first use, one request at a time."""

    def __init__(self, python: str | None = None):
        self.python = python or sys.executable
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self.broken: str | None = None

    def _start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [self.python, "-m", "agent_eval_action.run.judges.adk_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ready = _read(process.stdout)
        if not ready.get("ready"):
            process.kill()
            process.wait()
            self.broken = NO_ADK_EVAL.format(error=ready.get("error") or "the process ended")
            raise RuntimeError(self.broken)
        return process

    def start(self) -> None:
        """Starts the process ahead of its first request (beside the agent's run: its imports,
        a second or two, then cost the run nothing); a failure is said by the first request."""
        with self._lock:
            self._started()

    def _started(self) -> subprocess.Popen[str] | None:
        """The running process, started if it is not; None once it could not start (``broken`` says why)."""
        if self.broken is None and (self._process is None or self._process.poll() is not None):
            try:
                self._process = self._start()
            except (OSError, RuntimeError) as error:
                self.broken = self.broken or str(error)
        return self._process if self.broken is None else None

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            process = self._started()
            if process is None:
                return {"error": self.broken}
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
                return _read(process.stdout) or {"error": "ADK's evaluator process ended"}
            except (OSError, ValueError) as error:
                self._process = None
                return {"error": f"ADK's evaluator process failed: {error}"}

    def close(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                assert self._process.stdin is not None
                self._process.stdin.close()
                try:
                    self._process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            if self._process is not None and self._process.stdout is not None:
                self._process.stdout.close()
            self._process = None


def _read(stream: IO[str] | None) -> dict[str, Any]:
    line = stream.readline() if stream is not None else ""
    if not line:
        return {}
    data = json.loads(line)
    return data if isinstance(data, dict) else {}


def _content(text: str | None, role: str) -> dict[str, Any] | None:
    return None if text is None else {"role": role, "parts": [{"text": text}]}


def _app_details(trace: Trace, turns: int) -> list[dict[str, Any] | None]:
    """Per turn, ADK's ``AppDetails`` JSON: as the agent's worker recorded its requests, else as
    legacy spans hold them (a recorded run's ``call_llm`` spans), else None."""
    recorded = list(trace.app_details or [])[:turns]
    if any(recorded):
        return recorded + [None] * (turns - len(recorded))
    return app_details_by_turn(trace.spans, turns)


def actual_invocations(trace: Trace) -> list[dict[str, Any]]:
    """The run's turns as ADK's ``Invocation`` JSON, as ADK's eval makes them of its events
    (``InvocationEvents``): each tool call and its response, then the final response; user text
    and final response apart. Every call ADK's events hold, ``transfer_to_agent`` included."""
    turns = trace.turns
    calls: list[list[Any]] = [[] for _ in turns]
    for call in trace.tool_interactions or []:
        at = call.turn if call.turn is not None else (0 if len(turns) == 1 else None)
        if at is not None and 0 <= at < len(turns):
            calls[at].append(call)
    details = _app_details(trace, len(turns))
    out = []
    for index, turn in enumerate(turns):
        final: dict[str, Any] | None
        if turn.response_parts is not None:
            final = {"role": "model", "parts": [{"text": part} for part in turn.response_parts]}
        elif turn.response is not None:
            final = _content(turn.response, "model")
        elif index == len(turns) - 1:
            final = _content(trace.final_response, "model")
        else:
            final = None
        agent = trace.root_agent or trace.app_name or "agent"
        events: list[dict[str, Any]] = []
        said = turn.intermediate or []

        for k, call in enumerate(calls[index]):
            call_id = f"call-{index}-{k}"  # stable: the same run asks the same prompt
            result = call.output_result if isinstance(call.output_result, dict) else {"result": call.output_result}
            if call.error is not None:
                result = {"error": call.error}
            who = call.agent or agent
            events += _text_events(said, k, False, agent)  # what the agent said before the call, in an event of its own
            events.append(
                {
                    "author": who,
                    "content": {
                        "role": "model",
                        # What it said with the call comes first in the call's event, as the model wrote it.
                        "parts": [
                            *_text_parts(said, k),
                            {"function_call": {"id": call_id, "name": call.tool_name, "args": call.input_arguments}},
                        ],
                    },
                }
            )
            events.append(
                {
                    "author": who,
                    "content": {
                        "role": "user",
                        "parts": [{"function_response": {"id": call_id, "name": call.tool_name, "response": result}}],
                    },
                }
            )
        # What it said after its last call (or with a call this trace does not hold), then the final event.
        for at in sorted({entry.at for entry in said if entry.at >= len(calls[index])}):
            events += _text_events(said, at, False, agent) + _text_events(said, at, True, agent)
        if final is not None:  # ADK keeps the final event without its text (on final_response already)
            events.append({"author": agent})
        invocation: dict[str, Any] = {
            "invocation_id": f"turn-{index}",
            "user_content": _content(turn.user_input or "", "user"),
            "final_response": final,
            "intermediate_data": {"invocation_events": events},
        }
        if details[index] is not None:
            invocation["app_details"] = details[index]
        out.append(invocation)
    return out


def _text_parts(said: list[IntermediateText], at: int) -> list[dict[str, Any]]:
    """The text parts said in the same event as the turn's call number ``at``."""
    return [{"text": t} for entry in said if entry.at == at and entry.with_call for t in entry.texts]


def _text_events(said: list[IntermediateText], at: int, with_call: bool, agent: str) -> list[dict[str, Any]]:
    """Events of text alone: what was said before the turn's call number ``at`` (``with_call``:
    with a call this trace does not hold)."""
    return [
        {"author": entry.author or agent, "content": {"role": "model", "parts": [{"text": t} for t in entry.texts]}}
        for entry in said
        if entry.at == at and entry.with_call == with_call
    ]


def expected_invocations(question: Question) -> list[dict[str, Any]] | None:
    """The eval case's conversation as ADK's ``Invocation`` JSON (None: a conversation scenario,
    which has none)."""
    ref = question.reference_data
    if question.conversation_scenario is not None or ref.turn_references is None:
        return None
    rubrics = question.metadata.get(TURN_RUBRICS) or []
    out = []
    for index, text in enumerate(question.user_inputs):
        calls = (ref.turn_tool_calls or [])[index] if index < len(ref.turn_tool_calls or []) else []
        invocation: dict[str, Any] = {
            "invocation_id": f"expected-{index}",
            "user_content": _content(text, "user"),
            "final_response": _content(ref.turn_references[index] if index < len(ref.turn_references) else None, "model"),
            "intermediate_data": {"tool_uses": [{"name": c.tool_name, "args": c.input_arguments} for c in calls]},
        }
        if index < len(rubrics) and rubrics[index]:
            invocation["rubrics"] = rubrics[index]
        out.append(invocation)
    return out


async def judge_case(
    name: str,
    criterion: dict[str, Any],
    question: Question,
    trace: Trace,
    worker: AdkJudgeWorker,
    ask: Ask,
    ask_vertex: AskVertex | None = None,
) -> Score:
    """One question run scored on one criterion by ADK's evaluator, its judge asked through ``ask``
    (a Vertex-backed criterion's evaluation service through ``ask_vertex``)."""
    if name == SIMULATOR_QUALITY and question.conversation_scenario is None:
        return Score(value=None, explanation=f"{name} judges ADK's user simulator: it applies to conversation scenarios only")
    request: dict[str, Any] = {
        "metric": name,
        "criterion": criterion,
        "actual": actual_invocations(trace),
        "expected": expected_invocations(question),
        "case_rubrics": question.metadata.get(RUBRICS),
        # As ADK's eval service gives it to every evaluator (the user simulator's judge reads it).
        "conversation_scenario": question.conversation_scenario,
        "answers": {},
    }
    if not request["actual"]:
        return Score(value=None, explanation="no turns recorded to judge")
    answers: dict[str, list[str]] = request["answers"]
    for _ in range(ROUNDS):
        reply = await asyncio.to_thread(worker.ask, request)
        if "error" in reply:
            # Not computed, whatever the reason (ADK's evaluator refused the case, e.g. a criterion
            # that needs reference responses the question has none of): a criterion that gates then
            # stops the check, never passes without its score.
            error = str(reply["error"])
            why = error if error.startswith("not judged") else f"ADK's evaluator could not score it: {error}"
            return Score(value=None, explanation=why, details={NOT_COMPUTED: why})
        if "result" in reply:
            return _score(name, criterion, reply["result"])
        needs = reply.get("needs") or []
        if any("vertex" in need for need in needs) and ask_vertex is None:
            why = NOT_VIA_VERTEX.format(name=name)
            return Score(value=None, explanation=why, details={NOT_COMPUTED: why})
        # Every request of the round at once (each need's missing samples; a Vertex evaluation each).
        wanted = [
            (
                need["key"],
                ask_vertex(need["vertex"])
                if "vertex" in need and ask_vertex is not None
                else ask(need["model"], need["config"], need["prompt"], k),
            )
            for need in needs
            for k in range(len(answers.get(need["key"], [])), int(need["count"]))
        ]
        got = await asyncio.gather(*(asked for _, asked in wanted))
        for (key, _), answer in zip(wanted, got, strict=True):
            if isinstance(answer, tuple):  # (kind, why): the judge could not be reached, or the budget
                kind, why = answer
                return Score(value=None, explanation=why, details={NOT_COMPUTED: why, "cause": kind})
            answers.setdefault(key, []).append(answer)
    return Score(value=None, explanation=f"ADK's evaluator asked the judge more than {ROUNDS} rounds")


def _score(name: str, criterion: dict[str, Any], result: dict[str, Any]) -> Score:
    options = criterion.get("judge_model_options") or criterion.get("judgeModelOptions") or {}
    details: dict[str, Any] = {
        "adk_status": result["status"],
        "threshold": criterion.get("threshold"),
        "per_turn": result["per_turn"],
        "per_turn_status": result["per_turn_status"],
        "judge_calls": result["judge_calls"],
    }
    if name in VERTEX:
        details["judge"] = "the Vertex AI evaluation service"
    else:
        details["judge_model"] = options.get("judge_model") or options.get("judgeModel") or "gemini-2.5-flash"
        details["num_samples"] = options.get("num_samples") or options.get("numSamples") or 5
    if result["rubric_scores"]:
        details["rubric_scores"] = result["rubric_scores"]
        details["turn_rubric_scores"] = result["turn_rubric_scores"]
    if result["samples"]:
        details["samples"] = result["samples"]
    score = result["score"]
    if score is None:  # a criterion that gates stops the check on it, never passes without its score
        why = "ADK's evaluator scored no turn (NOT_EVALUATED): no judge answer it could read"
        return Score(value=None, explanation=why, details={**details, NOT_COMPUTED: why})
    return Score(value=float(score), explanation=_explanation(name, result), details=details)


def _explanation(name: str, result: dict[str, Any]) -> str:
    """What the judge said: the turns it judged, and its rationale where a turn fell."""
    per_turn = result["per_turn"]
    judged = [s for s in per_turn if s is not None]
    head = f"ADK {name}: {result['score']:.4g} over {len(judged)} judged turn(s), {result['status'].lower()}"
    why = []
    for turn, rubrics in enumerate(result["turn_rubric_scores"]):
        for rubric in rubrics:
            if rubric.get("score") == 0.0 and rubric.get("rationale"):
                why.append(f"turn {turn + 1}, rubric {rubric['rubric_id']}: {rubric['rationale']}")
    if not why:  # the Vertex AI evaluation service's own explanation of a turn that failed
        for turn, rubrics in enumerate(result["turn_rubric_scores"]):
            if turn < len(result["per_turn_status"]) and result["per_turn_status"][turn] == "FAILED":
                why += [f"turn {turn + 1}: {r['rationale']}" for r in rubrics if r.get("rubric_id") == "explanation" and r.get("rationale")]
    if not why:
        for turn, sample in enumerate(result["samples"]):
            majority = sample.get("majority") or {}
            if majority.get("score") == 0.0 and majority.get("text"):
                why.append(f"turn {turn + 1}: {_reasoning(majority['text'])}")
    return head + (f"; {'; '.join(why[:3])}" if why else "")


def _reasoning(text: str) -> str:
    """The judge's reasoning out of final_response_match_v2's answer (its own JSON-ish form)."""
    try:
        data = json.loads(text)
        if isinstance(data, dict) and data.get("reasoning"):
            value = data["reasoning"]
            return " ".join(value) if isinstance(value, list) else str(value)
    except ValueError:
        pass
    return " ".join(text.split())[:300]
