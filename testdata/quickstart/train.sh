#!/usr/bin/env bash
# The README's minimal job's worker: prints the GPUs yarn-am gave this TaskExecutor.
echo "train: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
