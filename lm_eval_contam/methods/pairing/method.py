"""The pairing test's registry entry: free-text partitions, log-likelihoods only, no control; scored by the reference
model too when the audit names one."""

from __future__ import annotations

from lm_eval_contam.core.partitions import local_free_text
from lm_eval_contam.core.registry import OneScoredTask
from lm_eval_contam.methods.pairing import report_section
from lm_eval_contam.methods.pairing.configs import METHOD, render_task_config, shipped_configs, task_name
from lm_eval_contam.methods.pairing.task import PairingSettings, pairing_docs
from lm_eval_contam.methods.pairing.verdicts import RELABELLING

TASKS = OneScoredTask(METHOD, task_name, render_task_config,
                      applies=lambda partition, reference: local_free_text(partition))

SPEC = RELABELLING.method_spec(TASKS, order=46, title="Pairing test (ours)", evidence_kind="pairing",
                               section=report_section.SECTION, docs=(PairingSettings, pairing_docs),
                               shipped_task_configs=lambda: shipped_configs(local_free_text))
