"""The memory-regression scenarios, one file per group (installed as memory_regression.suite)."""
