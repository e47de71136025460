"""A total outage recognised within a few calls: once ``TRIP`` attempts of questions in a row
ended in infrastructure (the model call failed after its own retries, or a worker was killed
from outside) with no attempt in between that reached the agent's own outcome, the model API is
taken to be down for the rest of the run. Questions not started then, and the retries of those
in flight, come back "not run" at once with the cause, instead of each being tried again with
backoff and again by the verdict's re-runs: the check says "could not be checked" in seconds.

One breaker for the whole run (every dataset, both sides in base mode), as the limiter and the
budget are. Counted by attempt outcome, never by time: no timer decides it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_eval_action.run.retry import describe, is_infrastructure

# Six attempts in a row: with every model call already tried 4 times inside its turn, a model
# failing 10% of its calls at random fails an attempt about once in 10,000; a stall past the
# time limit on 16% of attempts makes six in a row about once in 60,000.
TRIP = 6


class OutageDeclared(Exception):
    """The breaker tripped: this question is not run."""


@dataclass
class Breaker:
    trip: int = TRIP
    in_a_row: int = 0
    cause: str | None = None  # the last infrastructure error, said with the "not run"

    @property
    def tripped(self) -> bool:
        return self.in_a_row >= self.trip

    def heard(self, error: BaseException | None) -> None:
        """An attempt's outcome: None (the agent answered) or what it raised."""
        if error is not None and is_infrastructure(error):
            self.in_a_row += 1
            self.cause = describe(error)
        else:
            self.in_a_row = 0  # the API answered (one still in flight when it tripped, too): not down

    def check(self) -> None:
        """Raises OutageDeclared once tripped."""
        if self.tripped:
            raise OutageDeclared(
                f"not run: the model API failed {self.in_a_row} attempts in a row, taken as down for the rest of the run (last: {self.cause})"
            )
