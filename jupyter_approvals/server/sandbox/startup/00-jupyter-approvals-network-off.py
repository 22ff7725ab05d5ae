# jupyter-approvals: IPython startup file of a sandboxed kernel ("Python 3 (sandboxed)").
# The kernel has no network (its own network namespace). This makes a failed lookup or
# connection say so, instead of a bare "Name or service not known". It is a message, not the
# boundary: code that removes it still has no network.
import socket as _socket
from typing import Any as _Any

_WHY = (
    "the network is off in this sandboxed kernel (jupyter-approvals): ask the person to run "
    "what needs the network in a kernel of their own"
)
_getaddrinfo = _socket.getaddrinfo
_connect = _socket.socket.connect


def _explained_getaddrinfo(*args: _Any, **kwargs: _Any) -> _Any:
    try:
        return _getaddrinfo(*args, **kwargs)
    except _socket.gaierror as error:
        raise _socket.gaierror(error.errno, f"{error.strerror}; {_WHY}") from None


def _explained_connect(self: _socket.socket, address: _Any) -> None:
    try:
        _connect(self, address)
    except OSError as error:
        if self.family in (_socket.AF_INET, _socket.AF_INET6) and error.errno is not None:
            raise type(error)(error.errno, f"{error.strerror}; {_WHY}") from None
        raise


_socket.getaddrinfo = _explained_getaddrinfo
_socket.socket.connect = _explained_connect  # type: ignore[method-assign,assignment]
del _explained_getaddrinfo, _explained_connect, _Any
