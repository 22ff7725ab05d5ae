"""Jupyter AI 3's ACP agents through the agent gate: their permission requests held, their
writes and commands carried out only as approved (:mod:`.bridge`)."""
