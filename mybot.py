import json, sys  # plays every default: the smallest bot the server admits
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "name": "mybot", "protocol": 1}), flush=True)
    elif message["type"] == "request":
        print(json.dumps({"type": "reply", "id": message["id"], "choice": message["default"]}), flush=True)
    elif message["type"] == "shutdown":
        break
