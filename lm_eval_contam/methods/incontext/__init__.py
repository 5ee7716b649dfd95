"""In-context test (ours, after CoDeC, NVIDIA 2025): memorised instances gain less from in-context examples.

For each instance: its log-likelihood alone and after a few other instances of the partition, and the same for its
perturbed twin (same domain, unseen text). The test compares the instance's gain with its twin's, so a model that
merely knows the dataset's domain is not flagged. No control data is needed; logprobs only, four scored texts per
instance (two of them after the context).
"""

from lm_eval_contam.methods.incontext.docs import DEFAULT_CONTEXT_INSTANCES, InContextDoc, context_for, incontext_docs
from lm_eval_contam.methods.incontext.stats import InContextResult, gain, incontext_test

__all__ = ["DEFAULT_CONTEXT_INSTANCES", "InContextDoc", "InContextResult", "context_for", "gain", "incontext_docs",
           "incontext_test"]
