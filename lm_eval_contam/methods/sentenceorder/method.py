"""The sentence-order test's registry entry: free-text partitions, log-likelihoods only, no control; run only when
the audit names a reference model (its verdict reads u; on the model's own scores natural text fails its null)."""

from __future__ import annotations

from lm_eval_contam.core.partitions import local_free_text
from lm_eval_contam.core.registry import OneScoredTask
from lm_eval_contam.methods.sentenceorder import report_section
from lm_eval_contam.methods.sentenceorder.configs import METHOD, render_task_config, shipped_task_configs, task_name
from lm_eval_contam.methods.sentenceorder.task import SentenceOrderSettings, sentence_order_docs
from lm_eval_contam.methods.sentenceorder.verdicts import RELABELLING

TASKS = OneScoredTask(METHOD, task_name, render_task_config,
                      applies=lambda partition, reference: reference and local_free_text(partition))

SPEC = RELABELLING.method_spec(TASKS, order=47, title="Sentence-order test (ours)", evidence_kind="sentence order",
                               section=report_section.SECTION, docs=(SentenceOrderSettings, sentence_order_docs),
                               shipped_task_configs=shipped_task_configs, not_run_as=RELABELLING.on_reference)
