"""Correct stores whose keys carry the namespace they are given, but not as their prefix, as real libraries
build them: the hygiene scenario warns of them (prefixed-keys: SCAN by prefix and ACL key patterns miss their
keys) and names the form, never calls them keys outside the namespace."""

import base64

from tests.stores.correct import ListStore

IN_NAMESPACE = "test_keys_stay_in_namespace"


class EncodedPrefix(ListStore):
    """Microsoft Agent Framework's shape: the prefix encoded in base32 into the key's first segment,
    ``~redis-key-prefix-<b32>|v2|<session>``."""

    CAUSE = r"carry the namespace 'mrs:\w+:' in base32, not as their prefix \(first: '~redis-key-prefix-"

    def key(self, session_id):
        encoded = base64.b32encode(self.namespace.encode()).decode().rstrip("=")
        return f"~redis-key-prefix-{encoded}|v2|{session_id}"


class AfterAFixedWord(ListStore):
    """agent-memory-server's shape: the namespace after a fixed ``working_memory:``."""

    CAUSE = r"carry the namespace 'mrs:\w+:' after 'working_memory:', not as their prefix"

    def key(self, session_id):
        return f"working_memory:{self.namespace}{session_id}"


WARNED_BY: dict[type, list[str]] = {EncodedPrefix: [IN_NAMESPACE], AfterAFixedWord: [IN_NAMESPACE]}
