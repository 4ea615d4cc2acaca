"""Write the options' table of docs/running.md and the inputs of action.yml from the runner's options
(``memory_regression/options.py``'s ``OPTIONS``: each flag's help, default and documentation), so that
the command line, the action and the docs are one source. ``tests/unit/test_docs.py`` fails when either
file is not what this writes:

    python docs/build_options.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_regression.reports.github import input_namer  # noqa: E402
from memory_regression.options import OPTIONS  # noqa: E402

RUNNING = ROOT / "docs" / "running.md"
ACTION = ROOT / "action.yml"
TABLE_HEAD = "| option | default | meaning |\n|---|---|---|\n"
TABLE_END = "\n\n<!-- the table above is written by docs/build_options.py -->"
INPUTS_HEAD = ("inputs:\n"
               "  # Written by docs/build_options.py from the runner's options (memory_regression/options.py): edit\n"
               "  # those, then run it. Each input is the flag of its name; each may instead be kept in the\n"
               "  # [tool.memory-regression] table of working-directory's pyproject.toml, and an input given wins\n"
               "  # over it. No input has a default here: GitHub passes a default as if it were given.\n")
PYTEST_ARGS = ('  pytest-args:\n    description: "extra pytest arguments, split like a shell would '
               '(-k count_window -x)."\n    required: false\n')


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_table() -> str:
    """docs/running.md's table of the options: flag and value, the default as it reads, what it does."""
    rows = [f"| `{option.flag}{'' if option.is_switch else ' ' + _cell(option.metavar or '')}` | {option.shown} | "
            f"{option.doc or _cell(option.help)} |" for option in OPTIONS]
    return TABLE_HEAD + "\n".join(rows) + TABLE_END


def render_inputs() -> str:
    """action.yml's inputs: one per option, described by its help, the flags it names read as inputs."""
    as_inputs = input_namer([option.flag for option in OPTIONS])
    blocks = []
    for option in OPTIONS:
        text = as_inputs(option.help).replace("input ", "")
        default = "" if option.is_switch or option.default is None else f" (default {option.default})"
        description = json.dumps(f"{text}{default}.", ensure_ascii=False)
        blocks.append(f"  {option.flag.lstrip('-')}:\n    description: {description}\n    required: false\n")
    return INPUTS_HEAD + "".join(blocks) + PYTEST_ARGS


def rewritten(running: str, action: str) -> tuple[str, str]:
    """The two files with the generated parts in their places."""
    table = re.compile(re.escape(TABLE_HEAD) + r".*?" + re.escape(TABLE_END), re.S)
    inputs = re.compile(r"^inputs:\n.*?(?=^outputs:\n)", re.S | re.M)
    assert table.search(running) and inputs.search(action), "the markers of the generated parts are gone"
    return (table.sub(lambda _match: render_table(), running, count=1),
            inputs.sub(lambda _match: render_inputs() + "\n", action, count=1))


if __name__ == "__main__":
    running, action = rewritten(RUNNING.read_text(encoding="utf-8"), ACTION.read_text(encoding="utf-8"))
    RUNNING.write_text(running, encoding="utf-8")
    ACTION.write_text(action, encoding="utf-8")
