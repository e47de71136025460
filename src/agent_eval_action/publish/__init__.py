"""GitHub: the REST client and publishing the sticky comment, summary and annotations.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []

# The views publish writes beside results.json in the output directory; named here, where a command
# that writes results.json alone finds them without importing the views (9 ms after its run).
VIEWS = ("comment.md", "summary.md", "junit.xml", "report.html")
