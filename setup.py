"""Package discovery, the one part of the build pyproject.toml cannot say.

``[tool.setuptools.packages.find]`` names packages after their folders, but ``task_configs/`` sits at the top level
(the user's layout) and installs as ``lm_eval_contam.task_configs`` (``package-dir`` in pyproject.toml). So the
packages are found here: every folder under ``lm_eval_contam/`` and ``task_configs/``, data-only folders included
(namespace packages), so a new method package or config folder needs no edit. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

TASK_CONFIGS = "lm_eval_contam.task_configs"

setup(packages=[
    *find_namespace_packages(include=["lm_eval_contam", "lm_eval_contam.*"]),
    TASK_CONFIGS,
    *(f"{TASK_CONFIGS}.{package}" for package in find_namespace_packages("task_configs")),
])
