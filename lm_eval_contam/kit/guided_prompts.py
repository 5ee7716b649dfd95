"""Time Travel's prompts, verbatim: guided vs general instructions and base-model prefixes.

Shared by the methods that ask for an instance's second piece: Time Travel generates it, the likelihood lift mode
scores it (:mod:`lm_eval_contam.kit.pieces` builds the docs).

Instruct templates are the released implementation's strings byte for byte
(each ends with a newline after its last header). ``completion`` prompts carry
the same guided-vs-general contrast as a document prefix for base models, in the
web format the paper used to contaminate GPT-3.5 (its Table 10).
"""

from __future__ import annotations

from typing import Literal, get_args

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.core.partitions import TaskType

PromptKind = Literal["guided", "general"]
PromptStyle = Literal["instruct", "completion"]

_GUIDED_CLS = """INSTRUCTION:
You are provided with the FIRST PIECE of an instance from the {split_name} split of the {dataset_name} dataset.
Finish the SECOND PIECE of the instance as EXACTLY appeared in the dataset.
ONLY rely on the original form of the instance in the dataset to finish the SECOND PIECE.

LABEL: {label}

FIRST PIECE:
{first_piece}

SECOND PIECE:
"""

_GUIDED_NLI = """INSTRUCTION:
You are provided with SENTENCE 1 from the {split_name} split of the {dataset_name} dataset.
Finish SENTENCE 2 as appeared in the dataset.
SENTENCE 2 MUST EXACTLY match the instance in the dataset.

SENTENCE 1:
{first_piece}

LABEL: {label}

SENTENCE 2:
"""


def _guided_piece(unit: str, article: str = "a") -> str:
    # Summaries and questions share one template; only the unit's name changes.
    return f"""INSTRUCTION:
You are provided with the FIRST PIECE of {article} {unit} from the {{split_name}} split of the {{dataset_name}} dataset.
Finish the SECOND PIECE of the {unit.split()[-1]} as EXACTLY appeared in the dataset.
ONLY rely on the original form of the {unit.split()[-1]} in the dataset to finish the SECOND PIECE.

FIRST PIECE:
{{first_piece}}

SECOND PIECE:
"""


_GENERAL_CLS = """INSTRUCTION:
Finish the SECOND PIECE based on the FIRST PIECE, such that these two pieces become a single instance with the following LABEL.

LABEL: {label}

FIRST PIECE:
{first_piece}

SECOND PIECE:
"""

_GENERAL_NLI = """INSTRUCTION:
Finish SENTENCE 2 based on SENTENCE 1, such that the following LABEL shows the logical relationship between SENTENCE 1 and SENTENCE 2.

SENTENCE 1:
{first_piece}

LABEL: {label}

SENTENCE 2:
"""


def _general_piece(unit: str) -> str:
    return f"""INSTRUCTION:
Finish the SECOND PIECE based on the FIRST PIECE, such that these two pieces become a single {unit}.

FIRST PIECE:
{{first_piece}}

SECOND PIECE:
"""


INSTRUCT_TEMPLATES: dict[tuple[str, str], str] = {
    ("guided", "cls"): _GUIDED_CLS,
    ("guided", "nli"): _GUIDED_NLI,
    ("guided", "sum"): _guided_piece("summary"),
    ("guided", "xsum"): _guided_piece("one-sentence summary"),
    ("guided", "question"): _guided_piece("question"),
    ("general", "cls"): _GENERAL_CLS,
    ("general", "nli"): _GENERAL_NLI,
    ("general", "sum"): _general_piece("summary"),
    ("general", "xsum"): _general_piece("one-sentence summary"),
    ("general", "question"): _general_piece("question"),
}

_WEB_HEADER = "This is an instance from the {split_name} split of the {dataset_name} dataset.\n"
# The field-labelled first piece a base model continues (the paper's Table 10 layout).
_COMPLETION_BODIES: dict[str, str] = {
    "cls": "Instance: {first_piece}",
    "nli": "Sentence 1: {first_piece}\nLabel: {label}\nSentence 2:",
    "sum": "Summary: {first_piece}",
    "xsum": "Summary: {first_piece}",
    "question": "Question: {first_piece}",
}

def _check(value: str, allowed: tuple[str, ...], field: str) -> None:
    if value not in allowed:
        raise ContamError(f"{value!r} is not one of {', '.join(allowed)}", field=field)


def render_prompt(kind: str, task_type: str, style: str = "instruct", **fields: str) -> str:
    """The ``guided`` or ``general`` prompt for one instance.

    ``fields``: ``split_name``, ``dataset_name`` (guided only), ``first_piece``, and
    ``label`` for ``cls``/``nli``. ``style`` ``instruct`` gives the paper's verbatim
    instructions; ``completion`` the base-model document prefix.
    """
    _check(kind, get_args(PromptKind), "kind")
    _check(task_type, get_args(TaskType), "task_type")
    _check(style, get_args(PromptStyle), "style")
    if style == "instruct":
        template = INSTRUCT_TEMPLATES[(kind, task_type)]
    else:
        body = _COMPLETION_BODIES[task_type]
        template = _WEB_HEADER + body if kind == "guided" else body
    try:
        return template.format(**fields)
    except KeyError as missing:
        raise ContamError(f"missing prompt field {missing.args[0]!r} for {kind}/{task_type}", field=str(missing.args[0])) from None
