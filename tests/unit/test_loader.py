"""Loading a store (memory_regression/contract/loader.py): where it is defined is where its annotations point."""

import inspect
import sys

from memory_regression.contract.loader import load_object


def test_a_class_a_package_re_exports_is_defined_in_its_own_module(tmp_path, monkeypatch):
    package = tmp_path / "reexporting_app"
    package.mkdir()
    (package / "__init__.py").write_text("from .memory import ChatMemory\n")
    (package / "memory.py").write_text("\n\nclass ChatMemory:\n    pass\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    store, source = load_object("reexporting_app:ChatMemory", tmp_path)
    assert source == (package / "memory.py").resolve()
    assert inspect.getsourcelines(store)[1] == 3   # the line the annotations give, in that same file


def test_an_instance_is_defined_where_it_is_named(tmp_path, monkeypatch):
    (tmp_path / "instance_app.py").write_text("class Memory:\n    pass\n\n\nmemory = Memory()\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    _store, source = load_object("instance_app.py:memory", tmp_path)
    assert source == (tmp_path / "instance_app.py").resolve()
