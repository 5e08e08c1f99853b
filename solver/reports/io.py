"""Moved to `solver/files.py` (a foundation module: the sweep writes its results file without importing the
reports). This name stays so that older imports keep working."""
from ..files import (
    LEGACY_TEMP_AGE_S,
    OutputSet,
    atomic_path,
    check_outputs,
    check_writable,
    clean,
    commit_mark,
    committed_files,
    current_run_id,
    fsync_path,
    is_discard,
    output_set,
    remove_stale_temps,
)

__all__ = ["LEGACY_TEMP_AGE_S", "OutputSet", "atomic_path", "check_outputs", "check_writable", "clean", "commit_mark",
           "committed_files", "current_run_id", "fsync_path", "is_discard", "output_set", "remove_stale_temps"]
