"""What Jupyter AI does for its agents, done only as a person approved it: file writes and
terminal commands claim the approval of exactly themselves, once; reads pass the rules of
agents' paths (docs/protocol.md 8.4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core import errors
from ...core.model import Lease, RequestInfo
from ...core.tool_calls import environment
from .context import BridgeContext
from .effects import api_path_of, held_command, held_file


@dataclass
class ClientCalls:
    """Jupyter AI's client calls of its agents, through the gate."""

    context: BridgeContext

    def _claim(self, agent: str, held: Any, what: str) -> Lease:
        store = self.context.hold.store_for(agent)
        got = store.claim(held.action, held.fingerprint, slot=held.slot, owner=agent)
        if isinstance(got, Lease):
            return got
        if isinstance(got, RequestInfo):
            raise errors.ApprovalPending(
                f"{what} waits for a person's answer to its permission request; nothing ran.",
                request_id=got.id,
            )
        raise errors.ApprovalRequired(
            f"No approved permission request of this session {what}: a person approves each "
            "write and each command, exactly as it runs. Nothing ran; ask for permission first.",
        )

    async def _run(self, lease: Lease, call: Any) -> Any:
        try:
            result = await call
        except BaseException as exc:
            self.context.hold.ran(lease, exc)
            raise
        self.context.hold.ran(lease)
        return result

    async def write_text_file(
        self, original: Any, client: Any, content: str, path: str, session_id: str, **kw: Any
    ) -> Any:
        """Write only the approved content to the approved path, once."""
        agent = "jupyter-ai"
        try:
            persona = self.context.persona(client, session_id)
            agent = self.context.admitted(persona)
            where = self.context.where(persona)
            api_path = api_path_of(path, where)
            held = held_file(api_path, content, where, agent, session_id)
            lease = self._claim(agent, held, f"writes this content to {api_path}")
        except errors.ApprovalError as exc:
            raise self.context.refused(exc, agent, "a file write", path=str(path)[:500]) from None
        return await self._run(lease, original(client, content, path, session_id, **kw))

    async def create_terminal(
        self,
        original: Any,
        client: Any,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: Any = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> Any:
        """Run only the approved command, where it was approved, with its environment, once."""
        agent = "jupyter-ai"
        try:
            persona = self.context.persona(client, session_id)
            agent = self.context.admitted(persona)
            variables = [v.model_dump() if hasattr(v, "model_dump") else v for v in (env or [])]
            held = held_command(
                command,
                list(args or []),
                cwd,
                environment(variables),
                self.context.where(persona),
                agent,
                session_id,
            )
            lease = self._claim(agent, held, "runs this command")
        except errors.ApprovalError as exc:
            raise self.context.refused(
                exc, agent, "a command", command=str(command)[:500]
            ) from None
        call = original(
            client,
            command,
            session_id,
            args=args,
            cwd=cwd,
            env=env,
            output_byte_limit=output_byte_limit,
            **kw,
        )
        return await self._run(lease, call)

    async def read_text_file(
        self, original: Any, client: Any, path: str, session_id: str, **kw: Any
    ) -> Any:
        """Read as an agent's token may: not hidden places, Jupyter's own files, or outside
        the root. Reads are never held."""
        agent = "jupyter-ai"
        try:
            persona = self.context.persona(client, session_id)
            agent = self.context.admitted(persona)
            api_path_of(path, self.context.where(persona))
        except errors.ApprovalError as exc:
            raise self.context.refused(exc, agent, "a file read", path=str(path)[:500]) from None
        return await original(client, path, session_id, **kw)
