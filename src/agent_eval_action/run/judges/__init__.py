"""LLM-judged metrics: custom reference-aware judges (google-genai) and their engine."""
