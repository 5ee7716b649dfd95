"""The front door for method authors: everything a method family needs, built in or a plug-in, in one import.

``from lm_eval_contam.methods import api`` gives the records a method declares (:class:`Test`, :class:`MethodSpec`
and its capabilities), what its functions are handed (the partition, the audited model, the render target, one
model's results with their partition and record readers), the task base of a partition-level test, the renderer of
thin task YAMLs and the report sections' kit. Each name is defined once, in its own layer; this module only gathers
them, and a method imports nothing else of the project.
"""

from __future__ import annotations

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.install import package_template
from lm_eval_contam.core.method_verdict import (
    DRIVES,
    EXPLORATORY,
    PAPERS_OWN,
    Evidence,
    NotRun,
    Test,
    TestRole,
    Verdict,
)
from lm_eval_contam.core.partitions import Partition, registered_partitions
from lm_eval_contam.core.registry import (
    NO_SECTION,
    AuditedModel,
    BenchmarkAdjustment,
    ExplicitInput,
    Generation,
    MethodSpec,
    OneScoredTask,
    PlannedTasks,
    Quiz,
    QuizSample,
    RenderTarget,
    ReportSection,
    not_run_without_docs,
    register_method,
)
from lm_eval_contam.core.rundir import ModelResults
from lm_eval_contam.core.stats import ALPHA, TestResult
from lm_eval_contam.lmeval.partition_task import PartitionSteps, PartitionTestTask
from lm_eval_contam.lmeval.task_yaml import thin_task_yaml
from lm_eval_contam.reportkit.section import FactsSection

__all__ = [
    "ALPHA", "DRIVES", "EXPLORATORY", "NO_SECTION", "PAPERS_OWN", "AuditedModel", "BenchmarkAdjustment",
    "ContamError", "Evidence", "ExplicitInput", "FactsSection", "Generation", "MethodSpec", "ModelResults", "NotRun",
    "OneScoredTask", "Partition", "PartitionSteps", "PartitionTestTask", "PlannedTasks", "Quiz", "QuizSample",
    "RenderTarget", "ReportSection", "Test", "TestResult", "TestRole", "Verdict", "not_run_without_docs",
    "package_template", "register_method", "registered_partitions", "thin_task_yaml",
]
