"""Where the kernel's record of a request and the server's record of what it relayed disagree.

A kernel journals what becomes of each request; the server journals each decision it relays to
a kernel (``relayed``, written before the kernel sees it, with the row the person was shown).
Code in a kernel can rewrite what the kernel records, not what the server wrote. Read side by
side, they show:

- ``not_relayed``: a kernel the server relayed decisions to recorded an approval the server
  never relayed: it was made through another connection to the kernel (another frontend, a
  client of the connection file), or inside the kernel (kernels the server never relayed a
  decision to, or journals older than the relayed lines, are not judged this way);
- ``not_recorded``: the server relayed a decision the kernel recorded nothing about since (no
  approval, rejection, refusal or other end), although the request's time is over: the
  kernel's line went missing, or was kept out;
- ``turned_around``: the server relayed one answer, the kernel recorded the other;
- ``summary_rewritten``: the kernel's record of the approval names another summary than the
  row the person approved;
- ``fingerprint_differs``: the kernel approved other content than the row the person
  approved showed;
- ``outcome_unknown``: an approval the kernel recorded has no outcome (run, failure, expiry,
  loss or refusal; or its loss recorded by a stopping server) although its time to be used is
  over.

Pure: it reads journal entries (dicts, any order) and knows nothing of where they came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

DisagreementKind = Literal[
    "not_relayed",
    "not_recorded",
    "turned_around",
    "summary_rewritten",
    "fingerprint_differs",
    "outcome_unknown",
]
#: The newest journal lines read to look for disagreements (the History, the CLI).
DISAGREEMENT_WINDOW: Final = 2000
#: Events a kernel records about a request once a decision reached it.
_AFTER_A_DECISION: Final = frozenset(
    {"approved", "rejected", "refused", "auto_answered", "timed_out", "withdrawn", "dismissed",
     "lost", "expired", "executed", "failed"}
)  # fmt: skip
#: Events that end an approval: after one of them the approval's outcome is known.
_OUTCOMES: Final = frozenset({"executed", "failed", "expired", "lost", "refused", "staged"})
_ANSWER_OF: Final = {"approve": "approved", "reject": "rejected"}


@dataclass(frozen=True)
class Disagreement:
    """One place where the two records of a request disagree."""

    request_id: str
    kind: DisagreementKind
    detail: str

    def as_dict(self) -> dict[str, str]:
        """The JSON form (``GET journal``, ``jupyter approvals journal --json``)."""
        return {"request_id": self.request_id, "kind": self.kind, "detail": self.detail}


def _seconds(entry: Mapping[str, Any]) -> float | None:
    text = entry.get("time")
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def find_disagreements(
    entries: Iterable[Mapping[str, Any]], now: float, approval_ttl_s: float
) -> list[Disagreement]:
    """The disagreements among ``entries`` (a journal's lines, any order), oldest request
    first. ``now`` (epoch seconds) and ``approval_ttl_s`` tell when an approval's time to be
    used is over."""
    by_request: dict[str, list[Mapping[str, Any]]] = {}
    for entry in sorted(entries, key=lambda e: str(e.get("time", ""))):
        request_id = entry.get("request_id")
        if isinstance(request_id, str):
            by_request.setdefault(request_id, []).append(entry)
    relaying = {
        e.get("kernel_id")
        for lines in by_request.values()
        for e in lines
        if e.get("event") == "relayed" and isinstance(e.get("kernel_id"), str)
    }
    found: list[Disagreement] = []
    for request_id, lines in by_request.items():
        found.extend(_of_request(request_id, lines, now, approval_ttl_s, relaying))
    return found


def _of_request(
    request_id: str,
    lines: list[Mapping[str, Any]],
    now: float,
    ttl: float,
    relaying: set[object],
) -> list[Disagreement]:
    relayed = [e for e in lines if e.get("event") == "relayed"]
    # The kernel's own lines: not the server's record of what it relayed, nor the lines of
    # requests the server holds itself (agents' code and file changes).
    kernel = [
        e
        for e in lines
        if e.get("event") != "relayed"
        and e.get("recorded_by") != "server"
        and e.get("held_at") != "server"
    ]
    approved = next((e for e in kernel if e.get("event") == "approved"), None)
    decided = next((e for e in kernel if e.get("event") in ("approved", "rejected")), None)
    found: list[Disagreement] = []

    def say(kind: DisagreementKind, detail: str) -> None:
        found.append(Disagreement(request_id, kind, detail))

    relayed_approvals = [e for e in relayed if e.get("decision") == "approve"]
    if approved is not None and not relayed_approvals and approved.get("kernel_id") in relaying:
        say(
            "not_relayed",
            "the kernel recorded an approval this server never relayed (made through another "
            "connection to the kernel, or inside it)",
        )
    first_relay = _seconds(relayed[0]) if relayed else None
    if first_relay is not None and now - first_relay > ttl:
        answered = any(
            e.get("event") in _AFTER_A_DECISION and (_seconds(e) or 0) >= first_relay
            for e in kernel
        )
        if not answered:
            say(
                "not_recorded",
                "the server relayed a decision the kernel recorded nothing about since (its "
                "line went missing, or was kept out)",
            )
    if decided is not None and relayed:
        answers = {_ANSWER_OF.get(str(e.get("decision"))) for e in relayed}
        if decided.get("event") not in answers:
            sent = ", ".join(sorted(str(e.get("decision")) for e in relayed))
            say(
                "turned_around",
                f"the server relayed {sent}; the kernel recorded {decided.get('event')}",
            )
    if approved is not None and relayed_approvals:
        shown = relayed_approvals[-1]
        summary, shown_summary = approved.get("summary"), shown.get("shown_summary")
        if isinstance(shown_summary, str) and summary != shown_summary:
            say(
                "summary_rewritten",
                f"the person approved {shown_summary!r:.120}; the kernel recorded {summary!r:.120}",
            )
        fingerprint = approved.get("fingerprint")
        shown_fingerprint = shown.get("shown_fingerprint") or shown.get("fingerprint")
        if isinstance(shown_fingerprint, str) and fingerprint != shown_fingerprint:
            say(
                "fingerprint_differs",
                f"the row approved showed {shown_fingerprint[:19]}; the kernel approved "
                f"{str(fingerprint)[:19]}",
            )
    if approved is not None:
        at = _seconds(approved)
        after = kernel[kernel.index(approved) + 1 :]
        # A stopping server records the loss of its kernels' unused approvals itself.
        lost_at_stop = any(
            e.get("event") == "lost"
            and e.get("recorded_by") == "server"
            and (_seconds(e) or 0) >= (at or 0)
            for e in lines
        )
        ended = lost_at_stop or any(e.get("event") in _OUTCOMES for e in after)
        if not ended and at is not None and now - at > ttl:
            say(
                "outcome_unknown",
                "approved, and nothing was recorded of its use, expiry or loss since "
                "(the kernel's process may have been killed, or its record kept out)",
            )
    return found
