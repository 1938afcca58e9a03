import ctypes, json, os, sys

params = json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
pid = int(params.get("pid") or 0)
buf = ctypes.create_string_buffer(256)
# x86_64 numbers and arguments.
calls = {
    "getpid": (39,),
    "ptrace": (101, 16, pid, 0, 0),  # PTRACE_ATTACH
    "mount": (165, b"none", b"/tmp", b"tmpfs", 0, 0),
    "unshare": (272, 0x00020000),  # CLONE_NEWNS
    "userns": (272, 0x10000000),  # CLONE_NEWUSER
    "setns": (308, 0, 0),
    "seccomp": (317, 1, 0, buf),  # SECCOMP_SET_MODE_FILTER
    "prctl_seccomp": (157, 22, 2, buf),  # PR_SET_SECCOMP
    "bpf": (321, 5, buf, 128),  # BPF_PROG_LOAD
    "keyctl": (250, 0, -3, 0),  # KEYCTL_GET_KEYRING_ID, session keyring
    "chroot": (161, b"/tmp"),
    "pivot_root": (155, b"/tmp", b"/tmp"),
    "init_module": (175, buf, 16, b""),
    "io_uring": (425, 8, buf),
    "perf_event": (298, buf, 0, -1, -1, 0),
    "process_vm_readv": (310, pid, buf, 1, buf, 1, 0),
    "socket_vsock": (41, 40, 1, 0),  # AF_VSOCK: the hypervisor, outside any namespace
    "socket_alg": (41, 38, 5, 0),  # AF_ALG: the kernel's crypto API
    "socket_inet": (41, 2, 2, 0),  # AF_INET, SOCK_DGRAM
    "socket_unix": (41, 1, 1, 0),  # AF_UNIX, SOCK_STREAM
    "x32_getpid": (0x40000000 + 39,),
}
nr, *args = calls[params["name"]]
ret = libc.syscall(nr, *args)
if ret == -1:
    err = ctypes.get_errno()
    print(f"{params['name']} failed: {os.strerror(err)} (errno {err})")
    sys.exit(1)
print(f"{params['name']} returned {ret}")
