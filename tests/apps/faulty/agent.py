"""An ADK app on ADK's real ``Gemini`` model and the real google-genai client, pointed at a
loopback Gemini API ($FAKE_GEMINI_URL) that may misbehave (tests/fakes/gemini_server.py), with
one tool. The tool writes its process's id to $FAULTY_PID_FILE when set (a test kills that
process), and calls $FAULTY_TOOL_URL when set: a wrong port there is the tool's own bug."""

from __future__ import annotations

import os
import urllib.request

from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini

PRICES = {"apple": 1, "pear": 2, "plum": 3}


def lookup(item: str) -> dict:
    """Looks up the price of an item."""
    pid_file = os.environ.get("FAULTY_PID_FILE")
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as out:
            out.write(str(os.getpid()))
    url = os.environ.get("FAULTY_TOOL_URL")
    if url:
        with urllib.request.urlopen(url, timeout=5) as response:
            response.read()
    return {"item": item, "price": PRICES.get(item, 9)}


root_agent = LlmAgent(
    name="faulty",
    model=Gemini(model="gemini-2.5-flash", base_url=os.environ["FAKE_GEMINI_URL"]),
    instruction="Look the item's price up, then say it.",
    tools=[lookup],
)
