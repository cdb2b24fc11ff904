# PyTorch for the integration tests (docs/running.md#pytorch): `make torch-env` puts PyPI's default
# torch wheel (it imports and runs on a machine without a GPU; gloo is the CPU backend) in a virtual
# environment cached outside the repository, reused while its completion marker is there. The mini
# cluster's containers run on this machine as the same user, so the test jobs name its python by
# absolute path (am/torch_integration_test.go); a real cluster ships a packed environment instead.
# The shared installer (testdata/pyenv/install-venv.sh) needs 5800 MiB in the environment's place and
# 3500 under TMPDIR (the ~3 GB of wheels unpacked), and checks that the wheel imports without a GPU and
# has the gloo backend.
# TORCH_VERSION: one pinned release, so that every machine tests the same torch and the cache
# directory's name says which. 2.15.0 was the newest on PyPI when this was written (pip index
# versions torch) and has a cp311 manylinux_2_28 x86_64 wheel, which Python 3.11 on Debian 12
# (glibc 2.36) installs; its default wheel brings the CUDA libraries (most of the 3 GB) but imports
# and runs on CPU without a GPU. Another version: make torch-env TORCH_VERSION=2.14.1.
TORCH_VERSION ?= 2.15.0
TORCH_VENV ?= $(HOME)/.cache/yarn-am/torch-venv-$(TORCH_VERSION)
TORCH_PYTHON := $(TORCH_VENV)/bin/python

.PHONY: torch-env
torch-env:
	@PYTHON=$(or $(PYTHON),python3) bash testdata/pyenv/install-venv.sh torch $(TORCH_VENV) 5800 3500 \
	  'import torch, torch.distributed as d; assert d.is_gloo_available(), "no gloo"; print("torch-env: torch", torch.__version__, "imports; gloo available")' \
	  torch==$(TORCH_VERSION)

# The integration tests find the environment here (am/torch_integration_test.go): a missing one
# fails them. `make integration` depends on torch-env (Makefile).
integration: export YARN_AM_TORCH_PYTHON := $(TORCH_PYTHON)
