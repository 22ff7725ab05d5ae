"""Every name of jupyter_server, jupyter-collaboration and JupyterLab the agent gate relies on.

The gate recognises upstream handlers by their exact class (module and qualified name) and
reads a few attributes of upstream objects. An upstream rename would not raise anywhere: a
renamed handler would simply no longer be on the agents' list (every agent locked out), or no
longer be recognised as a contents or kernel route (a check skipped). So each name lives here
once, and ``tests/server/test_jupyter_server_seam.py`` checks that every one still exists in
the installed versions.
"""

from __future__ import annotations

import functools

_CONTENTS = "jupyter_server.services.contents.handlers"
_SESSIONS = "jupyter_server.services.sessions.handlers"
_KERNELS = "jupyter_server.services.kernels.handlers"
_KERNELSPECS = "jupyter_server.services.kernelspecs.handlers"

API_VERSION = "jupyter_server.base.handlers.APIVersionHandler"
API_STATUS = "jupyter_server.services.api.handlers.APIStatusHandler"
IDENTITY = "jupyter_server.services.api.handlers.IdentityHandler"
CONTENTS = f"{_CONTENTS}.ContentsHandler"
CHECKPOINTS = f"{_CONTENTS}.CheckpointsHandler"
MODIFY_CHECKPOINTS = f"{_CONTENTS}.ModifyCheckpointsHandler"
SESSIONS = f"{_SESSIONS}.SessionRootHandler"
SESSION = f"{_SESSIONS}.SessionHandler"
KERNELS = f"{_KERNELS}.MainKernelHandler"
KERNEL = f"{_KERNELS}.KernelHandler"
KERNEL_ACTION = f"{_KERNELS}.KernelActionHandler"
KERNEL_SOCKET = "jupyter_server.services.kernels.websocket.KernelWebsocketHandler"
KERNELSPECS = f"{_KERNELSPECS}.MainKernelSpecHandler"
KERNELSPEC = f"{_KERNELSPECS}.KernelSpecHandler"
KERNELSPEC_RESOURCE = "jupyter_server.kernelspecs.handlers.KernelSpecResourceHandler"
#: jupyter-collaboration's server part (optional: rooms exist only with it).
ROOM_SESSION = "jupyter_server_ydoc.handlers.DocSessionHandler"
ROOM_SOCKET = "jupyter_server_ydoc.handlers.YDocWebSocketHandler"
#: JupyterLab's list of its extensions, which a lab page an agent drives asks for.
LAB_EXTENSIONS = "jupyterlab.handlers.extension_manager_handler.ExtensionHandler"

#: Every handler class named above.
HANDLERS = (
    API_VERSION,
    API_STATUS,
    IDENTITY,
    CONTENTS,
    CHECKPOINTS,
    MODIFY_CHECKPOINTS,
    SESSIONS,
    SESSION,
    KERNELS,
    KERNEL,
    KERNEL_ACTION,
    KERNEL_SOCKET,
    KERNELSPECS,
    KERNELSPEC,
    KERNELSPEC_RESOURCE,
    ROOM_SESSION,
    ROOM_SOCKET,
    LAB_EXTENSIONS,
)

#: Attributes of upstream classes the gate reads or wraps: (module.class, attribute). Class
#: attributes and traits exist on the class; instance attributes are set in its ``__init__``
#: (or, for a room handler, its ``prepare``/``open``).
ATTRIBUTES = (
    # where the wrapped classes and objects are found at load
    ("jupyter_server.serverapp.ServerApp", "kernel_websocket_connection_class"),
    ("jupyter_server.serverapp.ServerApp", "identity_provider"),
    ("jupyter_server.serverapp.ServerApp", "authorizer"),
    ("jupyter_server.serverapp.ServerApp", "contents_manager"),
    ("jupyter_server.serverapp.ServerApp", "extension_manager"),
    ("jupyter_server.serverapp.ServerApp", "allow_origin"),
    ("jupyter_server.serverapp.ServerApp", "allow_origin_pat"),
    ("jupyter_server.serverapp.ServerApp", "disable_check_xsrf"),
    ("jupyter_server.serverapp.ServerApp", "login_handler_class"),
    # the request being handled, in the contents manager's calls
    ("jupyter_server.base.call_context.CallContext", "JUPYTER_HANDLER"),
    # the contents manager's methods the gate wraps, and its signing
    ("jupyter_server.services.contents.manager.ContentsManager", "check_and_sign"),
    ("jupyter_server.services.contents.fileio.FileManagerMixin", "_save_file"),
    # the kernel websocket connection the gate screens
    (
        "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection",
        "handle_incoming_message",
    ),
    (
        "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection",
        "handle_outgoing_message",
    ),
    (
        "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection",
        "disconnect",
    ),
    (
        "jupyter_server.services.kernels.connection.base.BaseKernelWebsocketConnection",
        "websocket_handler",
    ),
    ("jupyter_server.services.kernels.connection.base.BaseKernelWebsocketConnection", "kernel_id"),
    # a room's document and the file it saves to
    (ROOM_SOCKET, "room"),
    ("jupyter_server_ydoc.rooms.DocumentRoom", "_file"),
    ("jupyter_server_ydoc.rooms.DocumentRoom", "ydoc"),
)


def _class(dotted: str) -> type | None:
    """The class ``module.qualname``; None when its module is not installed. Raises
    LookupError when the module is there and the class is not."""
    import importlib

    module_name, _, qualname = dotted.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name.split(".")[0]):
            return None  # an optional distribution that is not installed
        raise
    found = getattr(module, qualname, None)
    if not isinstance(found, type):
        raise LookupError(dotted)
    return found


def _has_attribute(cls: type, attribute: str) -> bool:
    """Whether ``cls`` (or a base) has ``attribute`` as a class attribute or trait, or sets it
    on its instances (``self.<attribute> =`` in its source)."""
    import inspect

    if hasattr(cls, attribute):
        return True
    for base in cls.__mro__:
        try:
            source = inspect.getsource(base)
        except (OSError, TypeError):
            continue
        if f"self.{attribute} =" in source or f"self.{attribute}: " in source:
            return True
    return False


@functools.cache
def missing() -> tuple[str, ...]:
    """The names above that the installed versions lack (of installed distributions only);
    computed once, since the installed versions do not change under a running server."""
    gone = []
    for name in HANDLERS:
        try:
            _class(name)
        except LookupError:
            gone.append(name)
    for owner, attribute in ATTRIBUTES:
        try:
            cls = _class(owner)
        except LookupError:
            gone.append(owner)
            continue
        if cls is not None and not _has_attribute(cls, attribute):
            gone.append(f"{owner}.{attribute}")
    return tuple(gone)
