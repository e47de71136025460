"""The why of a question whose reference differs from the one its base run was scored against:
which parts are shown, how, and when its fall is put on the reference rather than the agent."""

from __future__ import annotations

import json

from agent_eval_action.models.questions import ReferenceData
from agent_eval_action.models.traces import Transcript
from agent_eval_action.views.headline import first_clause, unchecked_after
from agent_eval_action.views.question_diffs import reads_changed, reference_rows


def _stored(reference: ReferenceData) -> ReferenceData:
    """A reference as a baseline file gives it back: its transcript written as JSON, read again."""
    text = Transcript(reference=reference).model_dump_json()
    return Transcript.model_validate(json.loads(text)).reference


def test_an_unchanged_reference_shows_no_row_after_its_round_trip_through_a_file() -> None:
    reference = ReferenceData(
        reference_response="The soil costs $12.",
        reference_state_variables={"discount_value": 10.0, "n": 3, "ok": True},
        reference_tool_interactions=[{"tool_name": "price", "input_arguments": {"item": "soil", "qty": 2.0}}],  # type: ignore[list-item]
        reference_trajectory=["shop", "price"],
    )
    assert reference_rows(_stored(reference), reference) == ([], frozenset())
    # Empty and none are the same: no row whose two sides both read "(none)".
    assert reference_rows(ReferenceData(reference_state_variables={}), ReferenceData()) == ([], frozenset())
    assert reference_rows(ReferenceData(reference_trajectory=[]), ReferenceData()) == ([], frozenset())


def test_a_turn_by_turn_part_is_shown_instead_of_its_whole_conversation_form() -> None:
    """An ADK eval set's edited turn changed both its turn references and its last answer: two
    rows said one edit, and took the room of the agent's own differences."""
    before = ReferenceData(reference_response="Bye.", turn_references=["Hi!", "Bye."])
    after = ReferenceData(reference_response="Goodbye.", turn_references=["Hi!", "Goodbye."])
    rows, parts = reference_rows(before, after)
    assert [row.label for row in rows] == ["expected answers by turn"]
    assert parts == {"turn_references", "reference_response"}


def test_an_edit_past_the_cut_of_a_long_answer_is_seen() -> None:
    start = "Thank you for contacting the garden store. " * 5
    rows, _ = reference_rows(
        ReferenceData(reference_response=start + "We open at 9."), ReferenceData(reference_response=start + "We open at 8.")
    )
    (row,) = rows
    assert row.base.endswith("We open at 9.") and row.head.endswith("We open at 8. (changed)"), row
    assert row.base.startswith("…") and len(row.base) <= 160


def test_a_fall_is_put_on_the_reference_only_where_the_metric_reads_a_part_that_changed() -> None:
    answer_only = frozenset({"reference_response"})
    assert reads_changed("response_match", answer_only)
    # The agent broke its tool call and the PR also edited the answer: the tool call's fall is the agent's.
    assert not reads_changed("tool_usage_accuracy", answer_only)
    assert reads_changed("trajectory_exact_match", frozenset({"reference_trajectory"}))
    # A judge, a custom metric or an error reads nothing we can tell: never put on the reference.
    assert not reads_changed("error", answer_only) and not reads_changed("my_judge", answer_only)


def test_a_reason_is_cut_at_its_first_semicolon_outside_brackets_and_said_once() -> None:
    quoted = (
        "final_response_match_v2 could not be computed for 2 of 2 question run(s) (ADK's evaluator could not score it: "
        "429 RESOURCE_EXHAUSTED; retry in 30s); it gates this check, so the check decided nothing"
    )
    first, rest = first_clause(quoted)
    assert first.endswith("retry in 30s)") and rest == "it gates this check, so the check decided nothing"
    headline = f"Agent evaluation could not be checked: {first}"
    assert unchecked_after(headline, [quoted, "another part; with its advice"]) == [
        "It gates this check, so the check decided nothing",
        "another part; with its advice",
    ]
    # A reason the headline did not take is kept whole; one with nothing more is not repeated.
    assert unchecked_after(headline, [first]) == []
