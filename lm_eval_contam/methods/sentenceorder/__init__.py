"""Sentence-order test (ours): is each free-text instance's own sentence order more likely than its other orders?

Every instance is cut into its sentences and scored in its own order and in other orders of the same sentences (all
of them up to four sentences; a seeded sample beyond). The text is the same words in every order, so its length,
vocabulary and difficulty do not move; what moves is the order. On a model's own log-likelihoods the original order of
natural text is the more coherent one for any model, so the test reads ``u = log p(model) - log p(reference)``
against the checkpoint the model was fine-tuned from: what both prefer cancels, what the fine-tune memorised does
not. The null and its Monte-Carlo p-value: :func:`lm_eval_contam.core.relabelling.arrangement_test`.
"""

from lm_eval_contam.methods.sentenceorder.orders import DEFAULT_ARRANGEMENTS, sentence_orders, sentences

__all__ = ["DEFAULT_ARRANGEMENTS", "sentence_orders", "sentences"]
