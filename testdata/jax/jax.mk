# JAX for the integration tests (docs/running.md#jax): `make jax-env` puts PyPI's CPU jax and jaxlib
# in a virtual environment cached outside the repository, reused while its completion marker is there
# (the same installer as torch's: testdata/pyenv/install-venv.sh). As with torch, the mini cluster's
# containers run on this machine as the same user, so the test job names its python by absolute path
# (am/jax_integration_test.go).
# JAX_VERSION: one pinned release, for both jax and jaxlib (jax requires the jaxlib of its own
# release). 0.10.2 was the newest on PyPI when this was written (pip index versions jax / jaxlib) and
# has a cp311 manylinux_2_27 x86_64 jaxlib wheel, which Python 3.11 on Debian 12 (glibc 2.36)
# installs. Its default for jax_cpu_collectives_implementation is already gloo, the CPU
# cross-process collectives that testdata/jax/allreduce.py uses (it names it anyway). jaxlib is the
# CPU build; no CUDA plugin is installed. A fresh install downloads ~141 MB (jaxlib 85 MB, scipy,
# numpy) and takes 623 MiB; the installer asks for 800 MiB there and 400 under TMPDIR.
# Another version: make jax-env JAX_VERSION=0.9.2.
JAX_VERSION ?= 0.10.2
JAX_VENV ?= $(HOME)/.cache/yarn-am/jax-venv-$(JAX_VERSION)
JAX_PYTHON := $(JAX_VENV)/bin/python

.PHONY: jax-env
jax-env:
	@PYTHON=$(or $(PYTHON),python3) bash testdata/pyenv/install-venv.sh jax $(JAX_VENV) 800 400 \
	  'import jax; jax.config.update("jax_cpu_collectives_implementation", "gloo"); print("jax-env: jax", jax.__version__, "imports; devices", jax.devices())' \
	  jax==$(JAX_VERSION) jaxlib==$(JAX_VERSION)

# The integration tests find the environment here (am/jax_integration_test.go): a missing one fails
# them. `make integration` depends on jax-env (Makefile).
integration: export YARN_AM_JAX_PYTHON := $(JAX_PYTHON)
