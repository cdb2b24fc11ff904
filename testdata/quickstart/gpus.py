"""A worker that prints the GPUs yarn-am gave it (docs/quickstart-ml.md).

yarn-am's launcher runs before this script: it found the container's GPUs with nvidia-smi and wrote
them to the file named by YARN_AM_EXTERNAL_RESOURCES_FILE, and set CUDA_VISIBLE_DEVICES to their
indexes (docs/gpus.md#what-the-worker-gets).
"""
import json
import os

with open(os.environ["YARN_AM_EXTERNAL_RESOURCES_FILE"]) as f:
    gpus = json.load(f)["gpu"]  # [{"index": "0", "uuid": "GPU-..."}, ...]

indexes = ",".join(g["index"] for g in gpus)
uuids = ",".join(g.get("uuid", "?") for g in gpus)
print(f"{os.environ['NM_HOST']}: gpus {indexes} (uuids {uuids}) "
      f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')}", flush=True)

# A training script would start here: with CUDA_VISIBLE_DEVICES set, torch.device("cuda:0") is the
# first of this container's GPUs, whatever its index on the node.
