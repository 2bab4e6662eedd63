"""The walls of a worker, built from inside: the program that seals fresh namespaces
before the kernel starts (``python walls.py seal ... -- ARGV``, run by `confine` after
``unshare``: read-only mounts, a private ``/dev/shm``, hidden folders, the loopback up,
then a user namespace in which the process is nobody), and the seccomp filter a worker
installs once its channels are up (`refuse_unix_sockets`).

Imports nothing but the standard library, so that it starts fast before the kernel.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import signal
import socket
import struct
import sys
from dataclasses import dataclass

#: the environment variable a confined worker finds its protection in
ISOLATION_VARIABLE = "PORTER_WORKER_ISOLATION"
#: the environment variable a confined worker finds whether it shares the network in
NETWORK_VARIABLE = "PORTER_WORKER_NETWORK"
NAMESPACE = "namespace"
#: the environment variable a confined worker finds its private /tmp in (empty: none)
TMP_VARIABLE = "PORTER_WORKER_TMP"
#: the uid and gid a worker has inside its user namespace (``nobody``)
UNPRIVILEGED = 65534
#: mounts that stay writable: terminals (shared memory gets a private one)
_WRITABLE = ("/dev/pts",)
#: the worker's own /tmp (`_private_tmp`), and where its writes there are kept
_TMP, _TMP_LAYERS = "/tmp", "/dev/shm/.porter-tmp"
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC = 32, 4096, 16384
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_CLONE_NEWUSER = 0x10000000
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
_KEPT_FLAGS = {
    "nosuid": _MS_NOSUID,
    "nodev": _MS_NODEV,
    "noexec": _MS_NOEXEC,
    "noatime": _MS_NOATIME,
    "nodiratime": _MS_NODIRATIME,
    "relatime": _MS_RELATIME,
}


@dataclass(frozen=True)
class Walls:
    """What one worker is sealed into, besides the read-only file systems."""

    scratch: str
    #: the session's folder of shared blocks (inputs and outputs), writable inside
    shared: str | None = None
    #: folders the worker must not see (the person's Jupyter runtime folder)
    hidden: tuple[str, ...] = ()
    #: a network namespace of its own (False: the person's network, ``--allow-network``)
    own_network: bool = True


#: seccomp: the system call number of ``socket`` and the audit arch, per (little-endian)
#: machine
_SOCKET_CALLS = {
    "x86_64": (41, 0xC000003E),
    "aarch64": (198, 0xC00000B7),
    "ppc64le": (326, 0xC0000015),
}
_EACCES = 13


def refuse_unix_sockets() -> bool:
    """From now on this process and its children cannot make a Unix socket (``socket``
    with ``AF_UNIX`` fails with EACCES; ``socketpair`` still works): a socket file of the
    person's, which the read-only mounts do not guard, stays out of reach. Installed once
    the kernel's own channels are up; False where this machine has no such filter."""
    call = _SOCKET_CALLS.get(platform.machine())
    if call is None or not sys.platform.startswith("linux"):
        return False
    number, arch = call
    # struct sock_filter {u16 code; u8 jt; u8 jf; u32 k} over struct seccomp_data
    # {int nr; u32 arch; u64 ip; u64 args[6]}: nr at 0, arch at 4, args[0] at 16. System
    # calls of another ABI (i386 emulation, x32) are refused whole: they are other doors
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, refuse = 0x7FFF0000, 0x00050000 | _EACCES  # SECCOMP_RET_ALLOW, _RET_ERRNO
    program = [
        (ld, 0, 0, 4),  # 0 arch
        (jeq, 0, 6, arch),  # 1 another ABI: refuse
        (ld, 0, 0, 0),  # 2 nr
        (jge, 4, 0, 0x40000000),  # 3 x32: refuse
        (jeq, 0, 2, number),  # 4 not socket: allow
        (ld, 0, 0, 16),  # 5 the family
        (jeq, 1, 0, socket.AF_UNIX),  # 6 AF_UNIX: refuse
        (ret, 0, 0, allow),  # 7
        (ret, 0, 0, refuse),  # 8
    ]
    code = b"".join(struct.pack("HBBI", *op) for op in program)
    buffer = ctypes.create_string_buffer(code)

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Program(len(program), ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    # prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
    return libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0


# -- the program run inside fresh namespaces (as root, after ``unshare``) ----------------
def _mount_points() -> list[tuple[str, set[str]]]:
    """Every mount point of this namespace and its per-mount options."""
    found = []
    with open("/proc/self/mountinfo") as lines:
        for line in lines:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            found.append((point, set(fields[5].split(","))))
    return found


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, flags: int) -> None:
    if libc.mount(source and source.encode(), target.encode(), None, flags, None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def seal(walls: Walls) -> bool:
    """Seal this mount namespace (every file system read-only but the scratch directory,
    a private ``/dev/shm`` holding only the session's blocks, a private layer over
    ``/tmp``, the hidden folders empty),
    bring its loopback up, and become nobody in a user namespace of its own. True where
    ``/tmp`` is the worker's own (`_private_tmp`)."""
    libc = ctypes.CDLL(None, use_errno=True)
    user_ns = _nobody_namespace()
    scratch = os.path.realpath(walls.scratch)
    _mount(libc, scratch, scratch, _MS_BIND | _MS_REC)
    shared = os.open(walls.shared, os.O_RDONLY | os.O_DIRECTORY) if walls.shared else None
    private_shm = os.path.isdir("/dev/shm")
    if private_shm:
        _tmpfs(libc, "/dev/shm", "mode=1777")
        if shared is not None:  # the session's blocks, from the /dev/shm outside
            os.makedirs(walls.shared, exist_ok=True)
            _mount(libc, f"/proc/self/fd/{shared}", walls.shared, _MS_BIND)
    if shared is not None:
        os.close(shared)
    writable = (*_WRITABLE, "/dev/shm") if private_shm else _WRITABLE
    private_tmp = private_shm and _private_tmp(libc, scratch)
    if private_tmp:
        writable = (*writable, _TMP)
    for point, options in _mount_points():
        if _under(point, scratch) or any(_under(point, kept) for kept in writable):
            continue
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        for option in options & set(_KEPT_FLAGS):
            flags |= _KEPT_FLAGS[option]
        _mount(libc, None, point, flags)
    for folder in walls.hidden:
        if os.path.isdir(folder):
            _tmpfs(libc, folder, "mode=0555,size=4k")
            _mount(libc, None, folder, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    if walls.own_network:
        _loopback_up()
    # last: in the user namespace this process has no capability in the others
    if libc.setns(user_ns, _CLONE_NEWUSER) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"setns(user namespace): {os.strerror(error)}")
    os.close(user_ns)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    return private_tmp


def _private_tmp(libc: ctypes.CDLL, scratch: str) -> bool:
    """Give the worker a /tmp of its own: the person's as it is, seen through a layer
    that takes the worker's writes (an overlay whose upper layer is in the private
    ``/dev/shm``), so that a cell keeping a file in /tmp replays and the file stays the
    worker's. The scratch folder, where it is under /tmp, is bound back over the layer
    (the person's side reads it). False where the kernel has no overlay for it: /tmp
    then stays read-only, as every other file system."""
    if os.path.islink(_TMP) or not os.path.isdir(_TMP):
        return False
    kept = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY) if _under(scratch, _TMP) else None
    try:
        upper, work = f"{_TMP_LAYERS}/upper", f"{_TMP_LAYERS}/work"
        os.makedirs(upper)
        os.makedirs(work)
        data = f"lowerdir={_TMP},upperdir={upper},workdir={work}".encode()
        if libc.mount(b"overlay", _TMP.encode(), b"overlay", _MS_NOSUID | _MS_NODEV, data) != 0:
            os.rmdir(upper)
            os.rmdir(work)
            os.rmdir(_TMP_LAYERS)
            return False
        if kept is not None:
            _mount(libc, f"/proc/self/fd/{kept}", scratch, _MS_BIND)
        return True
    finally:
        if kept is not None:
            os.close(kept)


def _nobody_namespace() -> int:
    """A new user namespace in which this process's uid and gid are nobody's (an open
    descriptor of it). Made by a child, whose maps this process writes while /proc is
    writable: on ``exec`` inside it, a process whose uid there is not 0 has no
    capability there, and none in the namespaces made before, which belong to the one
    outside (no umount, remount or mount). Outside it keeps its own uid, so that it reads
    what the person reads."""
    made_r, made_w = os.pipe()
    done_r, done_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (a child that exits at once)
        code = 0
        try:
            os.close(made_r)
            os.close(done_w)
            if ctypes.CDLL(None, use_errno=True).unshare(_CLONE_NEWUSER) != 0:
                code = 1
            os.write(made_w, b"1" if code == 0 else b"0")
            os.read(done_r, 1)
        finally:
            os._exit(code)
    os.close(made_w)
    os.close(done_r)
    try:
        if os.read(made_r, 1) != b"1":
            raise OSError("unshare(CLONE_NEWUSER) failed")
        user_ns = os.open(f"/proc/{child}/ns/user", os.O_RDONLY)
        uid, gid = os.geteuid(), os.getegid()
        for name, line in (
            ("setgroups", "deny"),
            ("uid_map", f"{UNPRIVILEGED} {uid} 1"),
            ("gid_map", f"{UNPRIVILEGED} {gid} 1"),
        ):
            with open(f"/proc/{child}/{name}", "w") as control:
                control.write(line)
        return user_ns
    finally:
        os.close(done_w)
        os.close(made_r)
        os.waitpid(child, 0)


def _tmpfs(libc: ctypes.CDLL, target: str, data: str) -> None:
    flags = _MS_NOSUID | _MS_NODEV
    if libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, data.encode()) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount tmpfs on {target}: {os.strerror(error)}")


def _loopback_up() -> None:
    """Bring up ``lo`` of this (new, empty) network namespace: a replay's own servers on
    localhost work; nothing else is there."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, siocgifflags, request))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


def watch_parent() -> None:
    """Be killed when the process that started this one ends (kept across ``exec``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if parent == 1 or os.getppid() != parent:  # it ended before the watch began
        raise SystemExit("the process that started the worker has ended")


def main(args: list[str]) -> None:
    """``walls.py watch -- ARGV...``: end with the parent, then become ARGV;
    ``walls.py seal SCRATCH SHARED OWN_NETWORK [HIDDEN...] -- ARGV...``: seal this
    namespace (see `seal`; SHARED ``-``: none), then become ARGV."""
    usage = (
        "usage: walls.py watch -- ARGV... | "
        "walls.py seal SCRATCH SHARED OWN_NETWORK [HIDDEN...] -- ARGV..."
    )
    if args[:2] == ["watch", "--"] and args[2:]:
        watch_parent()
        argv = args[2:]
    elif args[:1] == ["seal"] and "--" in args[4:] and args.index("--") < len(args) - 1:
        end = args.index("--")
        scratch, shared, network = args[1:4]
        own = network == "1"
        private_tmp = seal(
            Walls(scratch, None if shared == "-" else shared, tuple(args[4:end]), own)
        )
        os.environ[ISOLATION_VARIABLE] = NAMESPACE
        os.environ[TMP_VARIABLE] = _TMP if private_tmp else ""
        os.environ[NETWORK_VARIABLE] = "own" if own else "shared"
        argv = args[end + 1 :]
    else:
        raise SystemExit(usage)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
