"""agent-eval-action: evaluate ADK agents on golden datasets and gate pull requests on regressions."""

__version__ = "0.1.0"
