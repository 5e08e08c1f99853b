"""Moved to `solver/files.py` (a foundation module: the sweep writes its results file without importing the
reports). This name stays so that older imports keep working."""
from ..files import OutputSet, atomic_path, check_writable, commit_mark, committed_files, fsync_path, output_set

__all__ = ["OutputSet", "atomic_path", "check_writable", "commit_mark", "committed_files", "fsync_path", "output_set"]
