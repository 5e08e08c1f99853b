"""Lines several designs share, printed once with their ranks (issue 45 item 5): "#1, #2 text", a run of ranks as
"#1–#4", and clauses of a "; "-joined text grouped one by one. Any object with a `rank` will do."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def rank_list(ranks: list[int]) -> str:
    """"#1, #2" — a run of three or more consecutive ranks as "#1–#4"."""
    out: list[str] = []
    i = 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out += [f"#{ranks[i]}–#{ranks[j]}"] if j - i >= 2 else [f"#{r}" for r in ranks[i:j + 1]]
        i = j + 1
    return ", ".join(out)


def grouped(designs: Iterable[Any], text_of: Callable[[Any], str]) -> list[tuple[str, str]]:
    """("#1, #2", text) once per distinct non-empty text, in rank order: a line the designs share is printed once
    (issue 45: five designs printed the same goodput line five times)."""
    return grouped_each(designs, lambda d: [text_of(d)])


def grouped_each(designs: Iterable[Any], texts_of: Callable[[Any], Iterable[str]]) -> list[tuple[str, str]]:
    """As `grouped` for a list of texts per design (flags, caveats): each distinct text once, with every rank
    whose list holds it, in order of first appearance."""
    out: dict[str, list[int]] = {}
    for d in designs:
        for text in dict.fromkeys(texts_of(d)):
            if text:
                out.setdefault(text, []).append(d.rank)
    return [(rank_list(ranks), text) for text, ranks in out.items()]


def grouped_clauses(designs: Iterable[Any], text_of: Callable[[Any], str], sep: str = "; ") -> str:
    """The designs' texts as one: split at `sep`, a clause every design (with a text) shares once, plainly and
    first; any other clause once, after the ranks that have it ("#1, #2: checkpoints at 250 GB/s …")."""
    texts = [(d.rank, text_of(d)) for d in designs]
    texts = [(rank, text) for rank, text in texts if text]
    clauses: dict[str, list[int]] = {}
    for rank, text in texts:
        for clause in dict.fromkeys(text.split(sep)):
            clauses.setdefault(clause, []).append(rank)
    shared = [c for c, ranks in clauses.items() if len(ranks) == len(texts)]
    own = [f"{rank_list(ranks)}: {c}" for c, ranks in clauses.items() if len(ranks) < len(texts)]
    return sep.join(shared + own)
