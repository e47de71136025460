"""An ADK app on ADK's real ``Gemini`` model, pointed at a loopback Gemini API ($FAKE_GEMINI_URL)
that answers 429 RESOURCE_EXHAUSTED above a concurrency limit only it knows."""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini

root_agent = LlmAgent(
    name="rate_limited",
    model=Gemini(model="gemini-2.5-flash", base_url=os.environ["FAKE_GEMINI_URL"]),
    instruction="Answer briefly.",
)
