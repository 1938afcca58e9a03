import json, socket, sys

params = json.load(sys.stdin)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if params.get("echo"):
    # Send to a socket of our own, inside the sandbox, and hear it back.
    inbox = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    inbox.bind((params["host"], 0))
    inbox.settimeout(2)
    target = inbox.getsockname()
else:
    target = (params["host"], int(params["port"]))
try:
    s.sendto(b"datagram from a tool", target)
    if params.get("echo"):
        print(f"echoed: {inbox.recv(64).decode()}")
        sys.exit(0)
except OSError as e:
    print(f"send failed: {e}")
    sys.exit(1)
print("sent")
