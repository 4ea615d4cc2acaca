"""The correct example stores of examples/stores/, with the options each runs with: what the
benchmarks and the flake script run the suite on."""

EXAMPLE_STORES = {
    "count window": ["--store", "examples/stores/count_window.py:CountWindowStore"],
    "token window": ["--store", "examples/stores/token_window.py:TokenWindowStore",
                     "--token-counter", "examples/stores/token_window.py:message_tokens"],
    "async": ["--store", "examples/stores/async_store.py:AsyncChatMemory"],
    "compacting": ["--store", "examples/stores/compacting.py:CompactingStore"],
    "two backends": ["--store", "examples/stores/two_backends.py:TwoBackendStore"],
}
