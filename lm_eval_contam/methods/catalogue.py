"""The registered methods: the one module that knows every built-in family's registry entry and loads the plug-ins.

:func:`load_methods` registers them, once per process: the built-in families (:func:`builtin_methods`, imported when
it runs, not when this module is imported), then, the first time the registered methods are read, the installed
plug-ins. Importing :mod:`lm_eval_contam.methods` (any method package: lm-eval does, through a task YAML's
``!function``) hands it to the registry as its loader, and the entry points above (the CLI, the harness, the audit,
the report, the studies) call it; the core names no method. A new built-in family adds its ``SPEC`` to
:func:`builtin_methods` and nothing else in the core changes. A method outside this project is an installed package
that declares an entry point in the group :data:`PLUGIN_GROUP` whose value is a ``MethodSpec`` or a callable returning
one (``[project.entry-points."lm_eval_contam.methods"] mymethod = "mypackage.method:SPEC"``); it is registered after
the built-in ones, with no edit to this project, never on import (the CLI's parser imports this module for
``--version`` and ``--help``). A plug-in that does not load is left out and named: ``report`` says so in one line and
goes on, a command that plans or runs the methods refuses to start.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Collection
from dataclasses import dataclass

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.registry import MethodSpec, register_lazily, register_method, registered_methods
from lm_eval_contam.kit.quiz_options import OFFLINE, make_quiz_options


def builtin_methods() -> tuple[MethodSpec, ...]:
    """The built-in families' registry entries, imported when first asked for (each family's ``method.py``)."""
    from lm_eval_contam.methods.dcq.method import SPEC as DCQ
    from lm_eval_contam.methods.dcr.method import SPEC as DCR
    from lm_eval_contam.methods.incontext.method import SPEC as INCONTEXT
    from lm_eval_contam.methods.likelihood.method import SPEC as LIKELIHOOD
    from lm_eval_contam.methods.optionorder.method import SPEC as OPTIONORDER
    from lm_eval_contam.methods.pairing.method import SPEC as PAIRING
    from lm_eval_contam.methods.reordered.method import SPEC as REORDERED
    from lm_eval_contam.methods.sentenceorder.method import SPEC as SENTENCEORDER
    from lm_eval_contam.methods.timetravel.method import SPEC as TIMETRAVEL

    return TIMETRAVEL, DCQ, DCR, REORDERED, LIKELIHOOD, INCONTEXT, OPTIONORDER, PAIRING, SENTENCEORDER


# The entry-point group an installed plug-in declares its method under.
PLUGIN_GROUP = "lm_eval_contam.methods"
# The quiz options every method with a ``quiz`` capability reads are made by DCQ's option maker.
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


@dataclass(frozen=True)
class Plugins:
    """The installed plug-ins: the methods registered, and why each one that could not be is left out."""

    methods: tuple[MethodSpec, ...]
    broken: tuple[ContamError, ...]


def register_plugins() -> Plugins:
    """Register the method of every installed plug-in that loads (entry points in :data:`PLUGIN_GROUP`, by name); one
    that does not load, gives no ``MethodSpec`` or takes a registered name is left out, its ContamError (naming it)
    among ``broken``. A command that needs every method refuses to run with one (:func:`plugins`)."""
    specs: list[MethodSpec] = []
    broken: list[ContamError] = []
    for entry in sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda entry: entry.name):
        try:
            specs.append(plugin_method(entry, taken=[spec.name for spec in specs]))
        except ContamError as error:
            broken.append(error)
    return Plugins(tuple(register_method(spec) for spec in specs), tuple(broken))


_PLUGINS: list[Plugins] = []  # the installed plug-ins once loaded (or being loaded)


def plugins() -> Plugins:
    """The installed plug-ins, registered once per process, the first time the registered methods are read (never on
    import: ``--version`` and ``--help`` import no plug-in)."""
    if not _PLUGINS:
        _PLUGINS.append(Plugins((), ()))  # while they load, the registry a plug-in's check reads does not load them again
        _PLUGINS[0] = register_plugins()
    return _PLUGINS[0]


_LOADED: list[bool] = []  # whether load_methods has run in this process


def load_methods() -> None:
    """Register the built-in methods now and the installed plug-ins the first time the registered methods are read
    (:func:`plugins`); once per process, however often it is called."""
    if _LOADED:
        return
    _LOADED.append(True)
    for spec in builtin_methods():
        register_method(spec)
    register_lazily(plugins)
