"""LLM-judged metrics: custom reference-aware judges (google-genai) and their engine.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
