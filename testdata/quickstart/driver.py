#!/usr/bin/env python3
"""A driver: runs in the AM's container (submit --driver ./driver.py), waits until every TaskExecutor has
ended and prints what each one had (docs/quickstart-ml.md#a-driver-script). Its exit code is the
application's outcome: 0 SUCCEEDED, anything else FAILED (docs/running.md#modes-batch-service-driver).
"""
import json
import os
import ssl
import sys
import time
import urllib.request

# The AM's HTTPS API is signed by the application's own authority: trust that one certificate.
tls = ssl.create_default_context(cafile=os.environ["YARN_AM_CA_CERT"])


def status():
    with urllib.request.urlopen(os.environ["YARN_AM_API"] + "status", context=tls, timeout=30) as r:
        return json.load(r)


while True:
    s = status()
    if s["counts"]["completed"] >= s["requirement"]["instances"]:
        break
    time.sleep(2)
for c in s["containers"]:
    gpus = ",".join(g["index"] for g in c.get("infos", {}).get("gpu", []))
    print(f"driver: {c['id']} on {c['node']} exited {c.get('exitStatus')} with gpus {gpus}", flush=True)
sys.exit(1 if s["counts"]["failed"] else 0)
