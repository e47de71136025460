"""One page built once per run, and its views: terminal, comment, summary, report.html, JUnit.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
