"""A fast line diff in pure Python: which lines of one text become which lines of another.

Files being rewritten usually differ here and there. A forward scan first walks both sides
together: equal runs are skipped by comparing growing slices (C speed), and each difference
is closed at the nearest point where 4 lines agree again (within 32 lines per side), the
small stretch in between refined by :class:`difflib.SequenceMatcher`. Python code thus runs
once per change, not once per line: a million-line file with 1% of its lines changed is
diffed in a fraction of a second.

A difference too long for the scan goes to a patience diff: lines occurring exactly once on
each side anchor the sides to each other (dicts and ``map``, C speed; a longest increasing
subsequence when the anchors cross), the stretches between anchors are diffed the same way,
and small stretches without anchors go to SequenceMatcher.

The result is a :class:`LineDiff`, a list of changed blocks; :mod:`.diff` renders it.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, islice, repeat
from operator import add, is_not, lt, ne, sub

from .text import Deadline

#: A change: ``old[i1:i2]`` becomes ``new[j1:j2]`` (one side may be empty).
Block = tuple[int, int, int, int]

#: Stretches without anchors up to this many lines (both sides together) get a minimal diff
#: from SequenceMatcher; longer ones are shown as one replacement.
SMALL_GAP = 2_000

#: A difference closes where RESYNC_RUN lines agree again within RESYNC_WINDOW lines per side;
#: longer differences go to the patience diff.
RESYNC_WINDOW = 32
RESYNC_RUN = 4

#: Stretches up to this many lines go straight to SequenceMatcher (anchoring costs more).
TINY_GAP = 64

_NOT_NONE = partial(is_not, None)


@dataclass(frozen=True)
class LineDiff:
    """The changes between two lists of lines, in order, none adjacent to another."""

    old: Sequence[bytes]
    new: Sequence[bytes]
    blocks: list[Block]
    #: Lines removed from ``old`` and added in ``new`` over all blocks.
    removed: int
    added: int
    #: False when the time ran out: some stretches are then shown as whole replacements, so
    #: the counts are upper bounds (the blocks still turn ``old`` into ``new``).
    exact: bool


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its line ending (``\\n``, ``\\r\\n`` or ``\\r``)."""
    return data.splitlines(keepends=True)


def is_binary(data: bytes) -> bool:
    """True if ``data`` looks binary the way git decides it: a NUL byte in its first 8 KiB."""
    return b"\x00" in data[:8192]


def diff_lines(
    old: Sequence[bytes], new: Sequence[bytes], deadline: Deadline | None = None
) -> LineDiff:
    """Diff two lists of lines; with a ``deadline``, stop refining once it passed."""
    blocks: list[Block] = []
    exact = True
    rest = _scan(old, new, blocks, deadline)
    if rest is not None and deadline is not None and deadline.passed():
        blocks.append(rest)
        rest = None
        exact = False
    stack: list[Block] = [rest] if rest is not None else []
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        alo, ahi, blo, bhi = _trim(old, new, alo, ahi, blo, bhi)
        if alo == ahi or blo == bhi:
            if alo != ahi or blo != bhi:
                blocks.append((alo, ahi, blo, bhi))
            continue
        if deadline is not None and deadline.passed():
            exact = False
            blocks.append((alo, ahi, blo, bhi))
            continue
        if (ahi - alo) + (bhi - blo) <= TINY_GAP:
            blocks.extend(_small_diff(old, new, alo, ahi, blo, bhi))
            continue
        anchors = _anchors(old, new, alo, ahi, blo, bhi)
        if anchors is None:
            blocks.extend(_small_diff(old, new, alo, ahi, blo, bhi))
            continue
        stack.extend(_gaps(anchors, alo, ahi, blo, bhi))
    merged = _merge(blocks)
    removed = sum(i2 - i1 for i1, i2, _, _ in merged)
    added = sum(j2 - j1 for _, _, j1, j2 in merged)
    return LineDiff(old, new, merged, removed, added, exact)


def _skip_equal(
    a: Sequence[bytes], b: Sequence[bytes], i: int, j: int, ahi: int, bhi: int
) -> tuple[int, int]:
    """Advance ``i`` and ``j`` over equal lines: galloping, then halving (slices compare in C)."""
    step = 1
    growing = True
    while step:
        if i + step <= ahi and j + step <= bhi and a[i : i + step] == b[j : j + step]:
            i += step
            j += step
            if growing:
                step *= 2
        else:
            growing = False
            step //= 2
    return i, j


def _resync(
    a: Sequence[bytes], b: Sequence[bytes], i: int, j: int, ahi: int, bhi: int
) -> tuple[int, int] | None:
    """The nearest ``(i', j')`` after a difference at ``(i, j)`` where both sides agree again.

    Agreement means RESYNC_RUN equal lines (or equal ends), within RESYNC_WINDOW lines on
    each side, nearest first (fewest lines skipped on both sides together); None if none.
    """
    for total in range(1, 2 * RESYNC_WINDOW + 1):
        for di in range(max(0, total - RESYNC_WINDOW), min(total, RESYNC_WINDOW) + 1):
            ii, jj = i + di, j + total - di
            if ii > ahi or jj > bhi:
                continue
            run = min(RESYNC_RUN, ahi - ii, bhi - jj)
            if run < RESYNC_RUN and ahi - ii != bhi - jj:
                continue  # near an end, only the whole rest agreeing counts
            if a[ii : ii + run] == b[jj : jj + run]:
                return ii, jj
    return None


def _scan(
    a: Sequence[bytes], b: Sequence[bytes], blocks: list[Block], deadline: Deadline | None
) -> Block | None:
    """Walk both sides together while they differ only here and there (the common case).

    Equal runs are skipped at C speed; each difference is closed at the nearest point where
    the sides agree again and refined by :func:`_small_diff`. Returns what is left for the
    patience diff once a difference is too long to close this way or the deadline passed
    (None when all is done).
    """
    i, ahi, j, bhi = _trim(a, b, 0, len(a), 0, len(b))
    while True:
        i, j = _skip_equal(a, b, i, j, ahi, bhi)
        if i == ahi or j == bhi:
            if i != ahi or j != bhi:
                blocks.append((i, ahi, j, bhi))
            return None
        if deadline is not None and deadline.passed():
            return i, ahi, j, bhi
        found = _resync(a, b, i, j, ahi, bhi)
        if found is None:
            return i, ahi, j, bhi
        blocks.extend(_small_diff(a, b, i, found[0], j, found[1]))
        i, j = found


def _trim(a: Sequence[bytes], b: Sequence[bytes], alo: int, ahi: int, blo: int, bhi: int) -> Block:
    """Cut the common head and tail off ``a[alo:ahi]`` and ``b[blo:bhi]``."""
    # Compare in growing slices (C speed) before walking the last stretch line by line.
    step = 16
    while alo + step <= ahi and blo + step <= bhi and a[alo : alo + step] == b[blo : blo + step]:
        alo += step
        blo += step
        step *= 2
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        alo += 1
        blo += 1
    step = 16
    while ahi - step >= alo and bhi - step >= blo and a[ahi - step : ahi] == b[bhi - step : bhi]:
        ahi -= step
        bhi -= step
        step *= 2
    while ahi > alo and bhi > blo and a[ahi - 1] == b[bhi - 1]:
        ahi -= 1
        bhi -= 1
    return alo, ahi, blo, bhi


def _repeated(lines: Sequence[bytes]) -> list[bytes]:
    """The distinct lines occurring more than once in ``lines``."""
    return [line for line, count in Counter(lines).items() if count > 1]


def _anchors(
    a: Sequence[bytes], b: Sequence[bytes], alo: int, ahi: int, blo: int, bhi: int
) -> tuple[list[int], list[int]] | None:
    """Indexes ``(in a, in b)`` of lines unique on both sides, increasing on both; or None."""
    part_a = a[alo:ahi]
    part_b = b[blo:bhi]
    # Line -> its index in b, for the lines b has once (dict, map and compress run in C).
    index_b = dict(zip(part_b, range(blo, bhi), strict=True))
    if len(index_b) != len(part_b):
        for line in _repeated(part_b):
            del index_b[line]
    ai, bj = _matches(part_a, alo, index_b)
    if not all(map(lt, bj, islice(bj, 1, None))):
        if len(set(bj)) != len(bj):
            # Some lines b has once occur more than once in a: they are no anchors.
            for line in _repeated(part_a):
                index_b.pop(line, None)
            ai, bj = _matches(part_a, alo, index_b)
        if bj:
            ai, bj = _longest_increasing(ai, bj)
    return (ai, bj) if ai else None


def _matches(
    part_a: Sequence[bytes], alo: int, index_b: dict[bytes, int]
) -> tuple[list[int], list[int]]:
    """Pairs ``(index in a, index in b)`` of the lines of ``part_a`` found in ``index_b``."""
    in_b = list(map(index_b.get, part_a))
    ai = list(compress(range(alo, alo + len(part_a)), map(_NOT_NONE, in_b)))
    bj: list[int] = list(filter(_NOT_NONE, in_b))  # type: ignore[arg-type]  # no None left
    return ai, bj


def _longest_increasing(ai: list[int], bj: list[int]) -> tuple[list[int], list[int]]:
    """The longest run of pairs whose b-indexes increase (patience sorting), in order."""
    from bisect import bisect_left

    tails: list[int] = []  # smallest b-index ending an increasing run of each length
    tail_at: list[int] = []  # position (in ai/bj) of that smallest end
    before = [-1] * len(bj)
    for k, value in enumerate(bj):
        length = bisect_left(tails, value)
        if length == len(tails):
            tails.append(value)
            tail_at.append(k)
        else:
            tails[length] = value
            tail_at[length] = k
        before[k] = tail_at[length - 1] if length else -1
    chosen: list[int] = []
    k = tail_at[-1]
    while k != -1:
        chosen.append(k)
        k = before[k]
    chosen.reverse()
    return [ai[k] for k in chosen], [bj[k] for k in chosen]


def _gaps(
    anchors: tuple[list[int], list[int]], alo: int, ahi: int, blo: int, bhi: int
) -> list[Block]:
    """The stretches between consecutive anchors (and before the first, after the last)."""
    ai, bj = anchors
    gaps: list[Block] = [(alo, ai[0], blo, bj[0]), (ai[-1] + 1, ahi, bj[-1] + 1, bhi)]
    # Consecutive anchors (i, j), (i', j') leave a gap unless i' = i + 1 and j' = j + 1; as
    # both indexes increase, that is exactly when (i' + j') - (i + j) == 2.
    sums = list(map(add, ai, bj))
    breaks = compress(
        range(len(sums) - 1), map(ne, map(sub, islice(sums, 1, None), sums), repeat(2))
    )
    gaps.extend((ai[k] + 1, ai[k + 1], bj[k] + 1, bj[k + 1]) for k in breaks)
    return [gap for gap in gaps if gap[0] != gap[1] or gap[2] != gap[3]]


def _small_diff(
    a: Sequence[bytes], b: Sequence[bytes], alo: int, ahi: int, blo: int, bhi: int
) -> list[Block]:
    """A stretch with no anchors: a minimal diff when small, else one replacement."""
    if (ahi - alo) + (bhi - blo) > SMALL_GAP or (ahi - alo == 1 and bhi - blo == 1):
        # Too long to match cheaply, or one line for another (already known to differ).
        return [(alo, ahi, blo, bhi)]
    matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
    return [
        (alo + i1, alo + i2, blo + j1, blo + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _merge(blocks: list[Block]) -> list[Block]:
    """Sort blocks and join those that touch, so equal runs separate every pair."""
    blocks.sort()
    merged: list[Block] = []
    for block in blocks:
        if merged and merged[-1][1] == block[0] and merged[-1][3] == block[2]:
            i1, _, j1, _ = merged[-1]
            merged[-1] = (i1, block[1], j1, block[3])
        else:
            merged.append(block)
    return merged
