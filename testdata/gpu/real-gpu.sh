#!/usr/bin/env bash
# Proves yarn-am's GPU path on a real NVIDIA GPU, without YARN (docs/gpus.md#proven-on-a-real-gpu).
# Needs: Linux, nvidia-smi, python3 with PyTorch (torch.cuda), and a yarn-am binary (YARN_AM_BIN, else
# bin/yarn-am). Prints PASS/FAIL per check, then what to record in docs/gpus.md (the GPUs, the
# topology matrix, discover's set, the health fields), and exits non-zero if any check failed.
# DEGRADED=1 runs the plumbing against testdata/fake-nvidia-smi (no torch.cuda checks; the topology
# check on its 8-GPU fixture islands-2x4), for machines without a GPU: TestRealGPUScriptDegraded (gpu)
# runs it so, with REAL_GPU_GO_TEST=0 (no nested go test of the sample parser).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${YARN_AM_BIN:-$here/bin/yarn-am}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
if [[ ${DEGRADED:-} == 1 ]]; then
	export PATH=$here/testdata/fake-nvidia-smi:$PATH FAKE_GPU_COUNT=1 FAKE_GPU_NODE=real-gpu-sh
	echo "(degraded: the fake nvidia-smi, no torch.cuda checks)"
fi
[[ -x $bin ]] || { echo "FAIL setup: no yarn-am binary at $bin (go build -o bin/yarn-am ./cmd/yarn-am)"; exit 1; }
bin=$(realpath "$bin")
cd "$work" || exit 1 # launch writes the worker's files (.yarn-am/, external-resources.json) where it runs
command -v nvidia-smi >/dev/null || { echo "FAIL setup: no nvidia-smi on PATH"; exit 1; }
# Outside YARN coordination is off unless asked for: two launches of one node then share nothing only
# with it (docs/gpus.md#coordination-co-located-workers-never-share-a-gpu).
mkdir -m 0700 "$work/claims"
conf=(-D external-resources=gpu -D external-resource.gpu.amount=1 -D external-resource.gpu.driver-factory.class=gpu -D external-resource.gpu.yarn.config-key=yarn.io/gpu
	-D "external-resource.gpu.param.discovery-script.args=--enable-coordination-mode --coordination-dir $work/claims")

# 1. discover against nvidia-smi: the GPU's index and UUID.
uuid=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader | head -1 | cut -d, -f2 | tr -d ' ')
if out=$("$bin" discover "${conf[@]}" 2>&1) && grep -q "$uuid" <<<"$out"; then
	pass "discover names GPU $uuid"
else
	fail "discover" "$(head -c 400 <<<"$out")"
fi

# 1b. the topology: the matrix as nvidia-smi prints it (recorded below), and discover's choice of a set
# of 2 GPUs from it (docs/gpus.md#topology-connected-sets). A host of one GPU has no set to weigh.
topo_env=()
[[ ${DEGRADED:-} != 1 ]] || topo_env=(FAKE_GPU_COUNT=8 FAKE_GPU_TOPO=islands-2x4)
gpus=$(env "${topo_env[@]}" nvidia-smi --query-gpu=index --format=csv,noheader | grep -c '[0-9]')
topo_raw=$(env "${topo_env[@]}" timeout -k 1 10 nvidia-smi topo -m 2>&1 | head -c 16384)
topo_out="(one GPU: no set to choose)"
if ((gpus >= 2)); then
	conf2=(-D external-resources=gpu -D external-resource.gpu.amount=2 -D external-resource.gpu.driver-factory.class=gpu -D external-resource.gpu.yarn.config-key=yarn.io/gpu
		-D "external-resource.gpu.param.discovery-script.args=--topology prefer")
	if topo_out=$(env "${topo_env[@]}" "$bin" discover "${conf2[@]}" 2>&1) && grep -q "topology (nvidia-smi topo -m): the GPUs above are linked by" <<<"$topo_out"; then
		pass "discover weighs the topology: $(grep -m1 'linked by' <<<"$topo_out" | sed 's/^ *//')"
	else
		fail "discover with topology" "$(head -c 600 <<<"$topo_out")"
	fi
else
	echo "n/a  topology: $gpus GPU (a set of one reads no topology); the matrix is recorded below"
fi

# 2. a worker launched on one GPU: CUDA_VISIBLE_DEVICES, the info file's UUID, and torch.cuda.
cat >"$work/worker.py" <<'PY'
import json, os, sys, time
info = json.load(open(os.environ["YARN_AM_EXTERNAL_RESOURCES_FILE"]))["gpu"]
cvd = os.environ.get("CUDA_VISIBLE_DEVICES", "")
assert len(info) == 1, info
print("CVD", cvd, "UUID", info[0].get("uuid"), flush=True)
if os.environ.get("DEGRADED") != "1":
    import torch
    assert torch.cuda.device_count() == 1, torch.cuda.device_count()
    u = "GPU-" + str(torch.cuda.get_device_properties(0).uuid)
    assert u.lower() == info[0]["uuid"].lower(), (u, info[0]["uuid"])
    if os.environ.get("BUSY"):
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        end = time.time() + float(os.environ["BUSY"])
        while time.time() < end:
            a @ a
        torch.cuda.synchronize()
print("OK", flush=True)
time.sleep(float(os.environ.get("HOLD", "0")))
PY
if out=$("$bin" launch "${conf[@]}" -- python3 "$work/worker.py" 2>&1) && grep -q "^OK" <<<"$out"; then
	pass "launch: the worker sees exactly its GPU ($(grep ^CVD <<<"$out"))"
else
	fail "launch" "$(tail -c 600 <<<"$out")"
fi

# 3. two launches of one node, one GPU each, on a node of one GPU: the second is refused while the
# first holds it, and served after it ends.
HOLD=6 "$bin" launch "${conf[@]}" -- python3 "$work/worker.py" >"$work/first.log" 2>&1 &
first=$!
for _ in $(seq 50); do grep -q "^OK" "$work/first.log" 2>/dev/null && break; sleep 0.2; done
"$bin" launch "${conf[@]}" -- python3 "$work/worker.py" >"$work/second.log" 2>&1
code=$?
if [[ $code == 90 ]]; then
	pass "second launch refused while the first holds the GPU (exit 90: $(grep -m1 'discovery failed' "$work/second.log" | head -c 160))"
else
	fail "second launch while the first holds the GPU" "exit $code, want 90: $(tail -c 300 "$work/second.log")"
fi
wait "$first"
if "$bin" launch "${conf[@]}" -- python3 "$work/worker.py" >"$work/third.log" 2>&1; then
	pass "a launch after the first ended is served"
else
	fail "launch after the first ended" "$(tail -c 300 "$work/third.log")"
fi

# 4. CUDA_VISIBLE_DEVICES preset to a UUID.
if out=$(CUDA_VISIBLE_DEVICES=$uuid "$bin" launch "${conf[@]}" -- python3 "$work/worker.py" 2>&1) && grep -q "^OK" <<<"$out"; then
	pass "CUDA_VISIBLE_DEVICES preset to the UUID ($(grep ^CVD <<<"$out"))"
else
	fail "CUDA_VISIBLE_DEVICES preset to a UUID" "$(tail -c 400 <<<"$out")"
fi

# 5. the sampler's call on a busy and an idle GPU.
sample() { nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used,memory.total,power.draw --format=csv,noheader,nounits | grep "$uuid"; }
idle=$(sample)
if [[ ${DEGRADED:-} == 1 ]]; then
	busy=$(FAKE_GPU_UTIL=0=100 sample)
else
	BUSY=8 python3 "$work/worker.py" >/dev/null 2>&1 &
	sleep 4
	busy=$(sample)
	wait
fi
u_idle=$(cut -d, -f3 <<<"$idle" | tr -d ' ')
u_busy=$(cut -d, -f3 <<<"$busy" | tr -d ' ')
if [[ $u_idle =~ ^[0-9]+$ && $u_busy =~ ^[0-9]+$ ]] && ((u_idle < 5 && u_busy > 50)); then
	pass "sampler fields: idle \"$idle\", busy \"$busy\""
else
	fail "sampler fields" "idle \"$idle\", busy \"$busy\""
fi
if [[ ${REAL_GPU_GO_TEST:-1} != 0 ]]; then
	(cd "$here" && go test -count=1 -run 'TestParseNVIDIASample' ./gpu/ >/dev/null 2>&1) && pass "parser" || fail "parser" "go test -run TestParseNVIDIASample ./gpu/"
fi

# 6. the health fields, one nvidia-smi call each (health-read.sh): a healthy GPU reads healthy, or
# "not supported" where the GPU or driver has no such field.
health=$(bash "$here/testdata/gpu/health-read.sh")
code=$?
summary=$(tail -1 <<<"$health")
if [[ $code == 0 ]]; then
	pass "health fields read one by one: $summary"
elif [[ $code == 2 && ${DEGRADED:-} == 1 ]]; then
	pass "health read plumbing (the fake nvidia-smi answers no health field): $summary"
else
	fail "health fields" "exit $code: $(grep -E 'SICK|not understood|not read' <<<"$health" | head -5 | tr '\n' ';') $summary"
fi

# What to record in docs/gpus.md#proven-on-a-real-gpu.
echo "=== to record in docs/gpus.md#proven-on-a-real-gpu ($(date -u +%F))"
echo "--- nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | head -20
echo "--- nvidia-smi topo -m"
printf '%s\n' "$topo_raw"
echo "--- yarn-am discover, 2 GPUs, --topology prefer"
printf '%s\n' "$topo_out"
echo "--- the health fields (testdata/gpu/health-read.sh)"
printf '%s\n' "$health"
echo "==="
echo "$fails check(s) failed"
exit $((fails > 0))
