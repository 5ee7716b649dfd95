"""The method families. Importing this package (any family's module: lm-eval does, through a task YAML's
``!function``; a plug-in does, through :mod:`lm_eval_contam.methods.api`) hands the registry its loader: the first
time the registered methods are read, :func:`lm_eval_contam.methods.catalogue.load_methods` registers the built-in
methods and the plug-ins. The core names no method."""

from lm_eval_contam.core.registry import register_lazily


def _load_methods() -> None:
    from lm_eval_contam.methods.catalogue import load_methods

    load_methods()


register_lazily(_load_methods)
