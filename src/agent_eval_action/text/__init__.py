"""Text in and out: loosely typed JSON, Markdown made safe for a comment, figures in their unit,
secrets masked, misspelt names, GitHub Actions workflow commands.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
