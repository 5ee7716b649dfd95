"""The registered methods: the one module that imports every built-in family's registry entry and loads the plug-ins.

Entry points (the CLI, the audit, the report, the null study) import it; a new built-in family adds its ``SPEC`` to
:data:`BUILTIN_METHODS` and nothing else in the core changes. A method outside this project is an installed package
that declares an entry point in the group :data:`PLUGIN_GROUP` whose value is a ``MethodSpec`` or a callable returning
one (``[project.entry-points."lm_eval_contam.methods"] mymethod = "mypackage.method:SPEC"``); it is registered here,
after the built-in ones, with no edit to this project.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Collection

from lm_eval_contam.methods.dcq.method import SPEC as DCQ
from lm_eval_contam.methods.dcr.method import SPEC as DCR
from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.methods.incontext.method import SPEC as INCONTEXT
from lm_eval_contam.methods.likelihood.method import SPEC as LIKELIHOOD
from lm_eval_contam.methods.optionorder.method import SPEC as OPTIONORDER
from lm_eval_contam.methods.pairing.method import SPEC as PAIRING
from lm_eval_contam.kit.quiz_options import OFFLINE, make_quiz_options
from lm_eval_contam.core.registry import MethodSpec, register_method, registered_methods
from lm_eval_contam.methods.reordered.method import SPEC as REORDERED
from lm_eval_contam.methods.sentenceorder.method import SPEC as SENTENCEORDER
from lm_eval_contam.methods.timetravel.method import SPEC as TIMETRAVEL

BUILTIN_METHODS: tuple[MethodSpec, ...] = (TIMETRAVEL, DCQ, DCR, REORDERED, LIKELIHOOD, INCONTEXT, OPTIONORDER,
                                           PAIRING, SENTENCEORDER)
# The entry-point group an installed plug-in declares its method under.
PLUGIN_GROUP = "lm_eval_contam.methods"
# The quiz options every method with "quiz_options" among its needs reads are made by DCQ's option maker.
QUIZ_OPTION_MAKER = make_quiz_options
OFFLINE_QUIZ_OPTION_GENERATOR = OFFLINE  # the maker's generator with no model in the loop (WordNet synonyms)


def plugin_method(entry: importlib.metadata.EntryPoint, taken: Collection[str] = ()) -> MethodSpec:
    """The method one entry point declares: its value loaded, called when it is not a ``MethodSpec`` itself; a
    plug-in that does not load, gives no ``MethodSpec`` or takes a registered name (or one of ``taken``) is one
    ContamError naming it."""
    where = f"method plug-in {entry.name!r} ({entry.value})"
    try:
        value = entry.load()
        spec = value if isinstance(value, MethodSpec) or not callable(value) else value()
    except Exception as error:  # whatever a third party's import or factory raises, named once
        raise ContamError(f"the {where} does not load: {type(error).__name__}: {error}",
                          field=f"entry point {PLUGIN_GROUP}") from None
    if not isinstance(spec, MethodSpec):
        raise ContamError(f"the {where} gives {type(spec).__name__}, not a MethodSpec (or a callable returning one)",
                          field=f"entry point {PLUGIN_GROUP}")
    if spec.name in {*taken, *(registered.name for registered in registered_methods())}:
        raise ContamError(f"the {where} is named {spec.name!r}, a method that is already registered",
                          field=f"entry point {PLUGIN_GROUP}")
    return spec


def register_plugins() -> list[MethodSpec]:
    """Register every installed plug-in's method (entry points in :data:`PLUGIN_GROUP`, by name) once all of them
    loaded (a broken one registers none); returns them."""
    specs: list[MethodSpec] = []
    for entry in sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda entry: entry.name):
        specs.append(plugin_method(entry, taken=[spec.name for spec in specs]))
    return [register_method(spec) for spec in specs]


for _spec in BUILTIN_METHODS:  # a module runs once per process, so each registers once
    register_method(_spec)
PLUGIN_METHODS: tuple[MethodSpec, ...] = tuple(register_plugins())
