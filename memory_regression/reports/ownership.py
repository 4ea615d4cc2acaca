"""Files the run wrote, given to the owner of the working directory when the runner runs as root (in a
container), so that the user, or a later workflow step, can read and delete them."""

from __future__ import annotations

import os
from pathlib import Path


def hand_over(paths: list[Path], workdir: Path) -> None:
    """Give what the run wrote to the owner of the working directory when we run as root (a
    container), so the user, or a later workflow step, can read and delete it. Only the files and
    directories the run wrote are touched, and a symlink is never followed."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    owner = workdir.stat()
    if owner.st_uid == 0:
        return
    for path in paths:
        try:
            if not path.is_symlink():
                os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
        except OSError:
            pass
