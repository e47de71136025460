"""Google's ``rouge-score`` (as ADK scores responses) and nltk's Porter stemmer it stems with,
imported without running nltk's ``__init__``.

``import nltk`` imports all of nltk (its corpus readers, parsers, chunkers, translation metrics,
numpy and parts of scipy): 0.11 s of the 0.14 s rouge-score's import takes here, in every
scoring run, for the one module it stems with. While rouge-score loads, ``nltk`` and
``nltk.stem`` are bare packages (their folders, none of their ``__init__``), so only the modules
it names are run; then every ``nltk`` entry leaves ``sys.modules``: rouge-score keeps what it
loaded, and a later ``import nltk`` (anyone's) gets the whole package, as always. When nltk is
imported already, or laid out otherwise than this expects, the plain imports are used.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from dataclasses import dataclass
from functools import cache
from typing import Any

# The packages left bare while rouge-score loads: nltk's ``__init__`` and ``nltk.stem``'s, which
# imports every stemmer and lemmatizer nltk has (the lemmatizer: its corpus readers).
_BARE = ("nltk", "nltk.stem")
_lock = threading.Lock()


@dataclass(frozen=True)
class Rouge:
    rouge_scorer: Any
    tokenize: Any
    tokenizers: Any
    porter: Any  # nltk.stem.porter


def _plain() -> Rouge:
    from nltk.stem import porter
    from rouge_score import rouge_scorer, tokenize, tokenizers

    return Rouge(rouge_scorer, tokenize, tokenizers, porter)


def _without_nltk_init() -> Rouge:
    before = set(sys.modules)
    try:
        for name in _BARE:
            spec = importlib.util.find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                raise ImportError(f"{name} is not a package here")
            bare = types.ModuleType(name)
            bare.__path__ = list(spec.submodule_search_locations)
            bare.__spec__ = spec
            sys.modules[name] = bare
        porter = importlib.import_module("nltk.stem.porter")
        vars(sys.modules["nltk.stem"])["porter"] = porter  # `from nltk.stem import porter` (rouge-score's)
        loaded = Rouge(
            importlib.import_module("rouge_score.rouge_scorer"),
            importlib.import_module("rouge_score.tokenize"),
            importlib.import_module("rouge_score.tokenizers"),
            porter,
        )
    finally:
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]
    return loaded


@cache
def rouge() -> Rouge:
    with _lock:
        if "nltk" in sys.modules or "rouge_score.tokenizers" in sys.modules:
            return _plain()
        try:
            return _without_nltk_init()
        except Exception:  # noqa: BLE001 - another nltk layout: its plain import still works
            for name in [n for n in sys.modules if n.startswith("rouge_score")]:
                del sys.modules[name]  # loaded against the bare packages: load them again
            return _plain()
