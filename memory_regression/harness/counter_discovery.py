"""Which token counter a store's windows follow, when they are not the suite's counter's.

A store that counts tokens its own way (cl100k_base where the profile counts o200k_base, or 3 tokens
a message and its role's beside the content, as OpenAI's cookbook counts) keeps windows the suite's
counter calls over-trimmed or over the budget, though the store is right by its own count.
:func:`counter_finding` tries the counters the suite knows (chars, words, approx and each tiktoken
encoding available offline), each with every per-message overhead up to :data:`MAX_OVERHEAD`, on
every window the store kept, and names those under which the run's policy keeps exactly what the
store kept, every time: the store's counter, and the flag that gives it to the suite.

A conversation of common words costs about as much in words as in cl100k_base tokens, and a few
large messages hardly tell one overhead from the next. So :func:`probe` first appends, to a session
of its own, :data:`PROBE_MESSAGES` small messages mixing words, digits, punctuation and Greek
(whose costs differ from one counter to the next), enough that the window holds a few hundred of
them, and loads it every :data:`PROBE_LOAD_EVERY`: one token more a message moves the window's edge
by a message or more, and each counter prices the mix differently.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any, Callable, Sequence

from ..contract.rules import Message
from ..contract.profiles import SIMPLE_COUNTERS, TokenCounter, known_tokenizers, tiktoken_counter
from ..reference.model import WindowPolicy, token_budget

MAX_OVERHEAD = 8   # tokens a message: chat formats add 3 to 5, with the role's token
PROBE_SESSION = "counter-probe"
PROBE_KEPT = 800          # messages of the probe the window should hold under approx, about
PROBE_MESSAGES = 1000     # appended, at most
PROBE_LOAD_EVERY = 50
PROBE_BUDGET_S = 10.0     # a slow store is judged on what was observed by then
# pieces whose costs differ between counters: cl100k_base gives 2, 4, 7 and 3 tokens, words 1 each
PROBE_UNITS = ("memory ", "1234567 ", "Ωμέγα ", "ok, ")
Observed = tuple[Sequence[Message], Sequence[Message]]   # what was appended, and the history the store kept


def tokenizers() -> dict[str, Callable[[str], int]]:
    """The counters the suite can run here, by the name --token-counter takes."""
    found: dict[str, Callable[[str], int]] = dict(SIMPLE_COUNTERS)
    for name in known_tokenizers():
        tokens = None if name in found else tiktoken_counter(name)
        if tokens is not None:
            found[name] = tokens
    return found


def probe_texts(budget: int) -> list[str]:
    """The probe's messages: each about ``budget / PROBE_KEPT`` characters' worth of approx tokens (at
    least one piece), the pieces in proportions that turn from one message to the next."""
    size = max(1, budget * 4 // PROBE_KEPT)   # characters: approx counts one token per four
    texts = []
    for index in range(PROBE_MESSAGES):
        pieces = [PROBE_UNITS[(index + turn) % len(PROBE_UNITS)] * (1 + (index * (turn + 1)) % 3)
                  for turn in range(len(PROBE_UNITS))]
        text = "".join(pieces)
        texts.append((text * (size // len(text) + 1))[:max(size, len(PROBE_UNITS[0]))].strip() + f" #{index}")
    return texts


def probe(store: Any, budget: int) -> list[Observed]:
    """Append the probe's messages to a session of their own and load it now and then: the windows the
    store kept of them. Stops at :data:`PROBE_BUDGET_S`, or at the first call that raises."""
    observed: list[Observed] = []
    appended: list[Message] = []
    started = time.monotonic()
    try:
        for index, text in enumerate(probe_texts(budget)):
            appended.append(store.add(PROBE_SESSION, Message("user" if index % 2 == 0 else "assistant", text)))
            if (index + 1) % PROBE_LOAD_EVERY == 0:
                observed.append((list(appended), store.load(PROBE_SESSION)))
                if time.monotonic() - started > PROBE_BUDGET_S:
                    break
    except Exception:   # noqa: BLE001 (the scenario's failure stands; the probe only looks further)
        pass
    return observed


def explaining(observed: Sequence[Observed], budget: int, policy: WindowPolicy) -> dict[str, list[int]]:
    """Each counter, with the per-message overheads, under which ``policy`` keeps every history observed."""
    found: dict[str, list[int]] = {}
    for name, tokens in tokenizers().items():
        cached = lru_cache(maxsize=None)(tokens)
        for overhead in range(MAX_OVERHEAD + 1):
            window = token_budget(budget, lambda content, o=overhead, count=cached: count(content) + o)
            if all(policy.allows(appended, history, window) for appended, history in observed):
                found.setdefault(name, []).append(overhead)
    return found


def _overheads(found: list[int]) -> str:
    low, high = found[0], found[-1]
    if low == high:
        return f"{low} token{'s' if low != 1 else ''}"
    return f"{low} to {high} tokens" if found == list(range(low, high + 1)) else f"{', '.join(map(str, found))} tokens"


def counter_finding(observed: Sequence[Observed], budget: int, policy: WindowPolicy, suites: str) -> str | None:
    """What the store's windows show of its counter, where the suite's (``suites``, its description)
    does not explain them and one or more it knows does; else None."""
    found = explaining(observed, budget, policy)
    if not found:
        return None
    matches = " or ".join(f"{'tiktoken ' if name not in SIMPLE_COUNTERS else ''}{name} + {_overheads(overheads)} per "
                          "message" for name, overheads in found.items())
    return (f"the store counts tokens its own way: every window it kept ({len(observed)}) is what {policy} keeps "
            f"counting {matches}, where this profile counts {suites}: give the suite the store's counter with "
            "--token-counter (module:function, the overhead included), or let the store take the suite's as "
            "count_tokens")


def own_counter(store: Any, budget: int, policy: WindowPolicy, counter: TokenCounter) -> str | None:
    """What the probe's windows show of the store's counter, where the suite's ``counter`` does not explain
    them: for a scenario whose own messages cannot tell (several writers at once, in no known order). None
    when the suite's counter explains every probe window."""
    observed = probe(store, budget)
    window = token_budget(budget, counter)
    if not observed or all(policy.allows(appended, history, window) for appended, history in observed):
        return None
    return counter_finding(observed, budget, policy, counter.description)
