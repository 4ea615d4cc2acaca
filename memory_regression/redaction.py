"""Keeping credentials out of everything a run prints or writes, and text any channel can carry.

A ``--redis`` URL may carry a password (``redis://user:PASS@host``). The runner never prints the
URL itself, only :func:`redact_url` of it, and every text that reaches output or a report, the
store's own output and exceptions included, goes through :meth:`Redactor.text` first. A report a
worker sends goes through :func:`sendable`: a store's text may hold what UTF-8 cannot encode.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable
from urllib.parse import unquote, urlsplit

# the user-info part of any URL: scheme://user:password@
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^@/\s]+)@")
MIN_SECRET_LENGTH = 4       # shorter passwords are only redacted inside URLs, not wherever they occur
STRONG_LENGTH = 8           # a secret this long, not all letters, is redacted wherever it occurs
MASK = "***"
_WORD = "A-Za-z0-9_"        # what may not touch a weak secret for it to be the secret (not part of a word)


def redact_url(url: str) -> str:
    """``redis://user:secret@host:6379/0`` as ``redis://***@host:6379/0``."""
    return _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", url)


def url_secrets(url: str) -> list[str]:
    """The password of a URL, as written and percent-decoded."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return []
    if not password:
        return []
    return sorted({password, unquote(password)}, key=len, reverse=True)


def is_strong(secret: str) -> bool:
    """Whether ``secret`` is unlikely to be part of ordinary text: at least STRONG_LENGTH characters, and not
    letters alone (a word: ``test``, ``password``, ``changeme``)."""
    return len(secret) >= STRONG_LENGTH and not secret.isalpha()


class Redactor:
    """Replaces URL credentials and the given secrets in any text: a strong secret (:func:`is_strong`) wherever
    it occurs; a weak one (a short password, a word) only where it stands as the secret, not inside a word
    or a name (``test`` is redacted in ``AUTH test``, ``PASSWORD=test`` and URLs, not in ``test_core.py``),
    so that node ids and words stay readable and comparable between runs."""

    def __init__(self, secrets: list[str] | tuple[str, ...] = ()):
        self.secrets = tuple(s for s in secrets if len(s) >= MIN_SECRET_LENGTH)
        self._strong = sorted((s for s in self.secrets if is_strong(s)), key=len, reverse=True)
        weak = sorted((s for s in self.secrets if not is_strong(s)), key=len, reverse=True)
        self._weak = re.compile(rf"(?<![{_WORD}])(?:{'|'.join(map(re.escape, weak))})(?![{_WORD}])") if weak else None

    def text(self, text: str) -> str:
        text = redact_url(text)
        for secret in self._strong:
            text = text.replace(secret, MASK)
        return self._weak.sub(MASK, text) if self._weak else text


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it, however nested in dicts (their keys
    too), lists, tuples and dataclass instances."""
    if isinstance(value, str):
        return change(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{member.name: map_strings(getattr(value, member.name), change)
                                             for member in dataclasses.fields(value) if member.init})
    if isinstance(value, dict):
        return {map_strings(key, change): map_strings(item, change) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(map_strings(item, change) for item in value)
    return value


def sendable(text: str) -> str:
    """``text`` as UTF-8 can carry it: an unpaired surrogate (what ``errors="surrogateescape"``
    decoding leaves in a string) becomes its escape, ``\\udcff``; other text stays as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
