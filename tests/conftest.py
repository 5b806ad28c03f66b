"""Suite-wide setup: one CPU thread for the models, no model hub, the shared fixtures."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest_plugins = ["tests.support.fixtures"]
