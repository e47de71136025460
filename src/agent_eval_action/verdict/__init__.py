"""Deciding: comparison with the baseline, the gate, its rules, which datasets a PR selects."""
