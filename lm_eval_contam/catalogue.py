"""The built-in methods, registered: the one module that imports every built-in family's registry entry.

Entry points (the CLI, the audit, the report, the null study) import it; a new built-in family adds its ``SPEC`` to
:data:`BUILTIN_METHODS` and nothing else in the core changes.
"""

from __future__ import annotations

from lm_eval_contam.dcq.method import SPEC as DCQ
from lm_eval_contam.dcq.options import OFFLINE, make_quiz_options
from lm_eval_contam.dcr.method import SPEC as DCR
from lm_eval_contam.incontext.method import SPEC as INCONTEXT
from lm_eval_contam.likelihood.method import SPEC as LIKELIHOOD
from lm_eval_contam.optionorder.method import SPEC as OPTIONORDER
from lm_eval_contam.pairing.method import SPEC as PAIRING
from lm_eval_contam.registry import MethodSpec, register_method
from lm_eval_contam.timetravel.method import SPEC as TIMETRAVEL

BUILTIN_METHODS: tuple[MethodSpec, ...] = (TIMETRAVEL, DCQ, DCR, LIKELIHOOD, INCONTEXT, OPTIONORDER, PAIRING)
# The quiz options every method with "quiz_options" among its needs reads are made by DCQ's option maker.
QUIZ_OPTION_MAKER = make_quiz_options
OFFLINE_QUIZ_OPTION_GENERATOR = OFFLINE  # the maker's generator with no model in the loop (WordNet synonyms)

for _spec in BUILTIN_METHODS:  # a module runs once per process, so each registers once
    register_method(_spec)
