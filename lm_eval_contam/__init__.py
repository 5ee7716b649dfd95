"""lm-eval-contam: data-contamination evidence inside lm-evaluation-harness runs."""

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import TEMPLATE, __version__, task_dir

__all__ = ["ContamError", "TEMPLATE", "__version__", "task_dir"]
