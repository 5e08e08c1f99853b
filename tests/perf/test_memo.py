"""`perf.memo.by_identity`: one evaluation per object, compared with `is`; a bounded number of objects."""
from __future__ import annotations

from solver.perf import memo


def test_one_call_per_object_and_a_new_one_for_an_equal_copy():
    calls = []

    @memo.by_identity
    def size(obj):
        calls.append(obj)
        return len(obj)

    a, b = [1, 2, 3], [1, 2, 3]  # equal, not the same object (and unhashable: lru_cache could not take them)
    assert size(a) == 3 and size(a) == 3 and calls == [a]
    assert size(b) == 3 and len(calls) == 2 and calls[1] is b
    a.append(4)  # the memo trusts the object not to change: what it serves are frozen models
    assert size(a) == 3


def test_the_memo_starts_again_when_full():
    calls = []

    @memo.by_identity
    def ident(obj):
        calls.append(obj)
        return obj

    objs = [[i] for i in range(memo.MAX_ENTRIES + 1)]
    for o in objs:
        ident(o)
    ident(objs[-1])  # kept: entered after the memo was cleared
    ident(objs[0])  # cleared: computed again
    assert len(calls) == memo.MAX_ENTRIES + 2
