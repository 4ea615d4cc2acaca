"""How a key carries the namespace the store was given, when it does not start with it.

Some libraries build keys of their own shape around the prefix they are given: Microsoft Agent
Framework encodes ``key_prefix`` in base32 into one segment (``~redis-key-prefix-<b32>|v2|...``),
agent-memory-server puts the namespace after a fixed ``working_memory:``. Those keys are the store's
by design, not keys outside its namespace; what the scheme costs is that SCAN by prefix and ACL key
patterns (``~prefix*``) miss them. :func:`carried` tells which form a key carries the namespace in.
"""

from __future__ import annotations

import base64
import binascii
from typing import Callable

# each form a key may carry the namespace in, and how the namespace looks in it
FORMS: dict[str, Callable[[bytes], str]] = {
    "base32": lambda raw: base64.b32encode(raw).decode().rstrip("="),
    "base64": lambda raw: base64.b64encode(raw).decode().rstrip("="),
    "url-safe base64": lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("="),
    "hex": lambda raw: binascii.hexlify(raw).decode(),
}


def carried(key: str, namespace: str) -> str | None:
    """The form ``key`` carries ``namespace`` in, where it does not start with it: "after 'working_memory:'"
    (the namespace itself, further on), "base32" (encoded into a segment, in upper or lower case), ...;
    None when it carries none. The namespace's trailing separator may be left out."""
    if key.startswith(namespace):
        return None
    cores = {namespace, namespace.rstrip(":")}
    for core in sorted(cores, key=len, reverse=True):
        at = key.find(core)
        if at > 0:
            return f"after {key[:at]!r}"
    for name, encode in FORMS.items():
        for core in cores:
            shown = encode(core.encode())
            if shown in key or (name in ("base32", "hex") and shown.lower() in key.lower()):
                return f"in {name}"
    return None
