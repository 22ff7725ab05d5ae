"""Escape attempts from a sandboxed kernel's cells, written as a hostile agent's code would be.

Each attempt runs in a real "Python 3 (sandboxed)" kernel started by a real server, and each
is judged on the host, by its effect (a file outside the project unchanged, a secret not
read, a process not reached), never by what the cell printed alone. What the sandbox does not
promise (CPU, memory, reads of what is readable) is in docs/security.md, not tested here as
if it were stopped.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from tests.server.conftest import printed

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder of the person's outside the project, with a file in it."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("outside\n")
    return folder


async def run_json(kernel, code: str) -> dict:
    """Run ``code`` (which sets ``found``, a dict) and return ``found``."""
    return json.loads(printed(await kernel.run(code + "\nimport json\nprint(json.dumps(found))")))


TRY = """
def attempt(name, action):
    try:
        result = action()
        found[name] = ['done', repr(result)[:200]]
    except BaseException as error:
        found[name] = ['refused', type(error).__name__ + ': ' + str(error)[:200]]
found = {}
"""


def refused(found: dict, name: str) -> None:
    assert found[name][0] == "refused", (name, found[name])


async def test_writes_never_leave_the_overlay(sandboxed_kernels, jp_root_dir, outside, state_dir):
    # Given a project holding a symbolic link to a folder of the person's, and a hardlink source
    project = Path(jp_root_dir)
    (project / "link").symlink_to(outside)
    (project / "data.csv").write_text("a\n")
    kernel = await sandboxed_kernels()
    # When its code writes through the link, up out of the project, beside it, over its own
    # overlay's folders and into the Python environment
    found = await run_json(
        kernel,
        TRY
        + f"""
import os, sys, site
attempt('through_link', lambda: open('link/secret.txt', 'w').write('x'))
attempt('dotdot', lambda: open({str(outside / "secret.txt")!r}, 'w').write('x'))
attempt('relative_dotdot', lambda: open('../outside/secret.txt', 'w').write('x'))
attempt('new_link', lambda: (os.symlink({str(outside)!r}, 'l2'), open('l2/new.txt', 'w')))
attempt('hardlink_in', lambda: os.link({str(outside / "secret.txt")!r}, 'hard.txt'))
attempt('state_dir', lambda: open({str(state_dir / "x")!r}, 'w').write('x'))
attempt('site_packages', lambda: open(site.getsitepackages()[0] + '/evil.pth', 'w').write('x'))
attempt('sys_prefix', lambda: open(sys.prefix + '/evil.txt', 'w').write('x'))
attempt('etc', lambda: open('/etc/evil', 'w').write('x'))
attempt('root_folder', lambda: os.makedirs('/anywhere/else'))
""",
    )
    # Then every one failed and the person's files are unchanged
    for name in (
        "through_link",
        "dotdot",
        "relative_dotdot",
        "new_link",
        "hardlink_in",
        "site_packages",
        "sys_prefix",
        "etc",
    ):
        refused(found, name)
    assert (outside / "secret.txt").read_text() == "outside\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert not (project / "l2").exists()
    assert not (project / "hard.txt").exists()
    # And nothing reached the server's state folder (its path may exist inside the sandbox,
    # on a private /tmp or where the kernel's own folders are mounted: judged by the effect)
    assert not (state_dir / "x").exists()
    refused(found, "root_folder")


async def test_no_capability_no_nested_namespace_no_device_no_mount(sandboxed_kernels):
    # Given a sandboxed kernel (the server may run as root, as here)
    kernel = await sandboxed_kernels()
    # When its code looks for privileges and tries what they would allow
    found = await run_json(
        kernel,
        TRY
        + """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
status = open('/proc/self/status').read()
found['cap_eff'] = status.split('CapEff:')[1].split()[0]
found['no_new_privs'] = status.split('NoNewPrivs:')[1].split()[0]
def unshare(flag):
    if libc.unshare(flag) != 0:
        raise OSError(ctypes.get_errno(), 'unshare refused')
attempt('nested_userns', lambda: unshare(0x10000000))
attempt('new_mount_ns', lambda: unshare(0x00020000))
attempt('mknod', lambda: os.mknod('/tmp/dev', 0o600 | 0o020000, os.makedev(1, 3)))
def mount_tmpfs():
    if libc.mount(b'none', os.getcwd().encode(), b'tmpfs', 0, None) != 0:
        raise OSError(ctypes.get_errno(), 'mount refused')
attempt('mount_over_project', mount_tmpfs)
found['pids'] = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
attempt('chroot', lambda: os.chroot('/tmp'))
import subprocess
attempt(
    'setuid_su',
    lambda: subprocess.run(['su', '-c', 'id'], check=True, timeout=5, capture_output=True),
)
""",
    )
    # Then it has no capability, cannot gain one, and every privileged call fails; the only
    # processes it could trace are the sandbox's own (bubblewrap's init and itself)
    assert found["pids"] == [1, 2]
    assert found["cap_eff"] == "0000000000000000"
    assert found["no_new_privs"] == "1"
    for name in (
        "nested_userns",
        "new_mount_ns",
        "mknod",
        "mount_over_project",
        "chroot",
        "setuid_su",
    ):
        refused(found, name)


async def test_the_persons_secrets_are_not_there_to_read(
    sandboxed_kernels, jp_serverapp, jp_root_dir, monkeypatch
):
    # Given a server with its runtime folder (token, cookie secret), a token in its
    # environment, and credential stores in the test HOME
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    home = Path.home()
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    (home / ".netrc").write_text("machine x login y password z\n")
    kernel = await sandboxed_kernels()
    runtime = Path(jp_serverapp.runtime_dir)
    # When its code looks for them everywhere it knows to look
    found = await run_json(
        kernel,
        TRY
        + f"""
import os, glob
attempt('runtime_dir', lambda: os.listdir({str(runtime)!r}))
attempt('ssh_key', lambda: open({str(home / ".ssh" / "id_rsa")!r}).read())
attempt('netrc', lambda: open({str(home / ".netrc")!r}).read())
attempt('server_cmdline', lambda: [open(p).read() for p in glob.glob('/proc/*/cmdline')])
found['environ'] = sorted(os.environ)
found['proc_environ'] = [open(p, 'rb').read().decode(errors='replace')
                         for p in glob.glob('/proc/*/environ') if os.access(p, os.R_OK)]
def server_files():
    roots = ['/tmp', '/run', os.path.expanduser('~'), os.getcwd()]
    return [f for root in roots for f in glob.glob(root + '/**/jpserver-*.json', recursive=True)]
attempt('jpserver_files', server_files)
attempt('other_kernels_sockets', lambda: glob.glob('/tmp/jpa-*/connection.json'))
""",
    )
    # Then none is readable, and no token is anywhere in its processes' environments
    refused(found, "runtime_dir")
    refused(found, "ssh_key")
    refused(found, "netrc")
    assert "GITHUB_TOKEN" not in found["environ"]
    assert not any("ghp_secret" in env for env in found["proc_environ"])
    assert jp_serverapp.identity_provider.token not in json.dumps(found)
    assert found["jpserver_files"] == ["done", "[]"]
    # Its own connection file is the only one it sees (no other kernel's socket folder)
    assert len(json.loads(found["other_kernels_sockets"][1].replace("'", '"'))) == 1


async def test_no_socket_reaches_the_server_or_the_desktop(
    sandboxed_kernels, jp_http_port, tmp_path
):
    # Given the server on loopback and a unix socket of the person's (a desktop bus, say)
    bus = tmp_path / "bus"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(bus))
    listener.listen(1)
    try:
        kernel = await sandboxed_kernels()
        # When its code connects to them, and to the outside world
        found = await run_json(
            kernel,
            TRY
            + f"""
import socket
def tcp(host, port):
    s = socket.create_connection((host, port), timeout=2); s.close()
def unix(path):
    s = socket.socket(socket.AF_UNIX); s.connect(path); s.close()
attempt('server_loopback', lambda: tcp('127.0.0.1', {jp_http_port}))
attempt('server_ipv6', lambda: tcp('::1', {jp_http_port}))
attempt('internet', lambda: tcp('1.1.1.1', 443))
attempt('dns', lambda: socket.getaddrinfo('pypi.org', 443))
attempt('unix_bus', lambda: unix({str(bus)!r}))
attempt('abstract_socket', lambda: unix('\\0/tmp/.X11-unix/X0'))
""",
        )
    finally:
        listener.close()
    # Then nothing answers
    for name in ("server_loopback", "server_ipv6", "internet", "dns", "unix_bus"):
        refused(found, name)
    refused(found, "abstract_socket")


async def test_a_full_tmp_or_home_is_bounded(sandboxed_kernels, jp_serverapp):
    # Given a sandboxed kernel with its size-bounded /tmp and HOME
    kernel = await sandboxed_kernels()
    # When its code fills /tmp with more than the bound
    found = await run_json(
        kernel,
        TRY
        + """
import os
def fill(path):
    with open(path, 'wb') as out:
        for _ in range(2048):
            out.write(b'0' * (1 << 20))
attempt('fill_tmp', lambda: fill('/tmp/big'))
attempt('fill_home', lambda: fill(os.path.expanduser('~/big')))
""",
    )
    # Then the write fails with "no space" before 2 GiB, in memory of its own
    assert found["fill_tmp"][0] == "refused"
    assert "No space left" in found["fill_tmp"][1]
    assert "No space left" in found["fill_home"][1]


async def test_names_with_control_characters_are_listed_exactly(
    sandboxed_kernels, jp_fetch, jp_root_dir
):
    # Given a sandboxed kernel that creates files whose names carry a newline, an escape and
    # a right-to-left override
    kernel = await sandboxed_kernels()
    names = ["a\nb.csv", "c\x1b[31md.csv", "e\u202egnp.exe"]
    await kernel.run(f"for name in {names!r}:\n    open(name, 'w').write('x')")
    # When the person lists the change set
    from tests.server.agent_client import APPROVALS_API, call

    _, _, body = await call(jp_fetch, APPROVALS_API, "changes")
    [change_set] = body["change_sets"]
    # Then each name is listed exactly as the bytes on disk name it (the UI escapes them),
    # and nothing was created in the project
    assert sorted(c["path"] for c in change_set["changes"]) == sorted(names)
    assert os.listdir(jp_root_dir) == [".git"] or set(os.listdir(jp_root_dir)) <= {
        ".git",
        "notebook.ipynb",
    }
