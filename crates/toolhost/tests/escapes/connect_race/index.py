import ctypes, errno, json, socket, struct, sys, threading

params = json.load(sys.stdin)
libc = ctypes.CDLL(None, use_errno=True)
port = int(params["port"])


def sockaddr_in(ip):
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(ip) + bytes(8)


allowed, refused = sockaddr_in(params["allowed"]), sockaddr_in(params["refused"])
# The one buffer connect() is handed, and that the other thread keeps rewriting: the two
# addresses differ in one byte, so every read of it sees one of them whole.
addr = ctypes.create_string_buffer(allowed, len(allowed))
done = threading.Event()


def flip():
    while not done.is_set():
        ctypes.memmove(addr, refused, len(refused))
        ctypes.memmove(addr, allowed, len(allowed))


# Let the flipper run between the main thread's calls too, not only while it waits in them.
sys.setswitchinterval(1e-5)
flipper = threading.Thread(target=flip)
flipper.start()
outcomes = {}
for _ in range(int(params["tries"])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if libc.connect(s.fileno(), addr, len(allowed)) == 0:
        outcome = "connected"
    else:
        outcome = errno.errorcode.get(ctypes.get_errno(), "errno?")
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
    s.close()
done.set()
flipper.join()
print(" ".join(f"{k}={v}" for k, v in sorted(outcomes.items())))
