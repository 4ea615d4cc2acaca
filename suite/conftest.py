pytest_plugins = ("memory_regression.plugin",)
