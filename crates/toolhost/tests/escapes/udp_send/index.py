import json, socket, sys

params = json.load(sys.stdin)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"datagram from a tool", (params["host"], int(params["port"])))
except OSError as e:
    print(f"send failed: {e}")
    sys.exit(1)
print("sent")
