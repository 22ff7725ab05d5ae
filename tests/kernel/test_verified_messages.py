"""The record of what a frontend message decides is taken from its signed frames, kept only
when the session accepts the message, used once, and never changed by edits to the message
dict that handlers and hooks see."""

from __future__ import annotations

import pytest
from jupyter_client.session import Session

from jupyter_approvals.kernel.verified_messages import VerifiedMessages

DECIDE = {"op": "decide", "id": "r1", "decision": "reject", "fingerprint": "sha256:" + "a" * 64}


def signed(session: Session, data: object, msg_type: str = "comm_msg") -> tuple[str, list]:
    """A message as the kernel reads it off its socket: its id and its frames."""
    message = session.msg(msg_type, {"comm_id": "c1", "data": data})
    return message["header"]["msg_id"], session.serialize(message)[1:]  # no delimiter


@pytest.fixture
def session() -> tuple[Session, VerifiedMessages]:
    session = Session(key=b"secret")
    verified = VerifiedMessages()
    verified.install(session)
    return session, verified


def test_a_decision_is_recorded_from_the_signed_bytes_not_the_dict_handlers_get(session):
    # Given a frontend's signed rejection
    sess, verified = session
    msg_id, frames = signed(sess, DECIDE)
    # When the session reads it, and something edits the dict it built into an approval
    message = sess.deserialize(frames)
    message["content"]["data"]["decision"] = "approve"
    # Then the record says what was signed, once
    record = verified.take(msg_id)
    assert record is not None
    assert record.decision == ("r1", "reject", DECIDE["fingerprint"], "")
    assert record.comm_id == "c1"
    assert verified.take(msg_id) is None


def test_a_card_message_carries_its_decision_inside_custom_content(session):
    sess, verified = session
    msg_id, frames = signed(sess, {"method": "custom", "content": DECIDE})
    sess.deserialize(frames)
    assert verified.take(msg_id).decision[1] == "reject"


@pytest.mark.parametrize(
    ("data", "msg_type"),
    [({"op": "list"}, "comm_msg"), (DECIDE, "execute_request"), ({"op": "decide!"}, "comm_msg")],
    ids=["a-listing", "not-a-comm-message", "no-decision"],
)
def test_messages_without_a_decision_record_nothing(session, data, msg_type):
    sess, verified = session
    msg_id, frames = signed(sess, data, msg_type)
    sess.deserialize(frames)
    assert verified.take(msg_id) is None


def test_a_message_whose_signature_fails_records_nothing(session):
    # Given a decision signed with another key
    sess, verified = session
    msg_id, frames = signed(Session(key=b"not the kernel's"), DECIDE)
    # When the kernel's session reads it, it refuses it, and nothing is recorded
    with pytest.raises(ValueError, match="Invalid Signature"):
        sess.deserialize(frames)
    assert verified.take(msg_id) is None


def test_a_message_sent_again_under_its_id_records_nothing(session):
    # Given a decision recorded and used
    sess, verified = session
    message = sess.msg("comm_msg", {"comm_id": "c1", "data": DECIDE})
    sess.deserialize(sess.serialize(message)[1:])
    assert verified.take(message["header"]["msg_id"]) is not None
    # When it is re-signed with other metadata under the same id
    message["metadata"] = {"again": True}
    sess.deserialize(sess.serialize(message)[1:])
    # Then it records nothing
    assert verified.take(message["header"]["msg_id"]) is None
