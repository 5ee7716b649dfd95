"""lm-eval task configs shipped with lm-eval-contam; see ``lm_eval_contam.task_dir()``."""
