"""Stores for this project's own tests: correct reference stores, and broken variants of them."""
