import json, os, sys

params = json.load(sys.stdin)
pid = int(params["pid"]) or os.getpid()
try:
    os.kill(pid, int(params["sig"]))
except OSError as e:
    print(f"kill({pid}) failed: {e}")
    sys.exit(1)
print(f"signalled {pid}")
