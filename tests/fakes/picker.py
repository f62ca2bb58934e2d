"""A scripted `command` provider (toolproof's protocol): answers by prompt from a JSON script.

    command: [python, picker.py, script.json]

Script: {"<prompt>": answer}. An answer is what to print ({"tool", "args", "text"}), or
{"exit": N, "stderr": "..."} to fail, {"print": "raw text"} to print something else,
{"sleep": seconds} to stall. Unknown prompts get {"tool": null}. With PICKER_LOG set, each request
is appended to that file as one JSON line.
"""

import json
import os
import sys
import time

script = {}
if len(sys.argv) > 1:
    with open(sys.argv[1], encoding="utf-8") as f:
        script = json.load(f)
request = json.load(sys.stdin)
if os.environ.get("PICKER_LOG"):
    with open(os.environ["PICKER_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(request) + "\n")
answer = script.get(request["prompt"], {"tool": None})
if "sleep" in answer:
    time.sleep(answer["sleep"])
if "exit" in answer:
    print(answer.get("stderr", ""), file=sys.stderr)
    sys.exit(answer["exit"])
if "print" in answer:
    print(answer["print"])
else:
    print(json.dumps(answer))
