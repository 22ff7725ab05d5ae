# jupyter-approvals: IPython startup file of a sandboxed kernel ("Python 3 (sandboxed)").
# The sandbox bounds the kernel's processes and the size of what it writes. This makes an
# error that comes from those bounds say so, with its code, instead of a bare "Resource
# temporarily unavailable" or "File too large". It is a message, not the bound.
import errno as _errno
import resource as _resource
import sys as _sys
from typing import Any as _Any

_CODE = "APPROVAL_SANDBOX_LIMIT"


def _limit_note(value: BaseException) -> str | None:
    if isinstance(value, RuntimeError) and "can't start new thread" in str(value):
        return _processes_note()
    if not isinstance(value, OSError):
        return None
    if value.errno == _errno.EFBIG:
        most = _resource.getrlimit(_resource.RLIMIT_FSIZE)[0]
        return (
            f"[{_CODE}] a file in this sandboxed kernel may hold at most {most:,} bytes "
            "(jupyter-approvals, sandbox_overlay_bytes): write less, or ask the person to run it "
            "in a kernel of their own"
        )
    if value.errno == _errno.EAGAIN and isinstance(value, BlockingIOError):
        return _processes_note()
    return None


def _processes_note() -> str:
    # The same bound holds as RLIMIT_NPROC, or for root as the kernel's pids cgroup.
    most = _resource.getrlimit(_resource.RLIMIT_NPROC)[0]
    bound = f"at most {most:,} processes and threads" if most > 0 else "few processes"
    return (
        f"[{_CODE}] this sandboxed kernel may run {bound} at once (jupyter-approvals, "
        "sandbox_processes), or the system is out of them"
    )


def _install() -> None:
    shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821
    if shell is None:
        return
    show = shell.showtraceback

    def explained(exc_tuple: _Any = None, *args: _Any, **kwargs: _Any) -> _Any:
        value = (exc_tuple or _sys.exc_info())[1]
        note = _limit_note(value) if value is not None else None
        if note and value is not None:
            # IPython shows an exception's __notes__ under its traceback (add_note is 3.11+).
            notes = getattr(value, "__notes__", None)
            if not isinstance(notes, list):
                notes = []
                setattr(value, "__notes__", notes)  # noqa: B010
            if note not in notes:
                notes.append(note)
        return show(exc_tuple, *args, **kwargs)

    shell.showtraceback = explained


_install()
del _install
