"""Only what pyproject.toml cannot say: the packages, discovered, and the scenarios of suite/, which
install as memory_regression.suite (pyproject.toml's package-dir)."""

from setuptools import find_namespace_packages, setup

setup(packages=[*find_namespace_packages(include=["memory_regression*"], exclude=["*.test", "*.test.*"]),
                "memory_regression.suite"])
