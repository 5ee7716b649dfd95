"""The parts of an lm-eval request that the glue and the generation path build alike.

- the API stop rule: the stop string an API model's generation request carries when its task sets none;
- a paired request's second context: lm-eval's rendering of the first prompt with another prompt swapped in
  (Time Travel's general prompt beside the guided one, DCR's control beside its item), so the chat template,
  system prompt and any generation prefix stay identical between the two requests.

Below both the task glue and :mod:`lm_eval_contam.lmeval.generation`, which use it.
"""

from __future__ import annotations

import json
from typing import Any

from lm_eval_contam.core.errors import ContamError
from lm_eval_contam.lmeval.lm_eval_compat import is_json_chat

# The stop string of an API request whose task sets none. lm-eval's API models send `until: []` as `stop: []`, which
# some OpenAI-compatible servers reject (transformers serve cannot map an empty list to tokens: HTTP 500). A reply
# ends at the model's own end of turn, so the request carries one stop a reply does not spell out in text: GPT-2's
# end-of-text marker, which every byte-level tokenizer can encode and OpenAI's API accepts.
API_STOP = "<|endoftext|>"


def with_api_stop(generation_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``generation_kwargs`` for an API model's request: an empty ``until`` becomes ``[API_STOP]``."""
    return generation_kwargs if generation_kwargs.get("until") else {**generation_kwargs, "until": [API_STOP]}


def _replace_last(text: str, guided_prompt: str, general_prompt: str) -> str | None:
    """``text`` with its last guided prompt replaced by the general one (also tried stripped); None if absent."""
    for old, new in ((guided_prompt, general_prompt), (guided_prompt.strip(), general_prompt.strip())):
        head, found, tail = text.rpartition(old)
        if found:
            return head + new + tail
    return None


def swap_prompt(context: str, guided_prompt: str, general_prompt: str) -> str:
    """The rendered general context: the guided prompt replaced inside lm-eval's rendered context.

    Reusing lm-eval's rendering keeps the chat template, system prompt and any
    generation prefix identical between the two requests.
    """
    swapped = _replace_last(context, guided_prompt, general_prompt)
    if swapped is None:
        raise ContamError("the rendered context does not contain the guided prompt", field="doc_to_text")
    return swapped


def swap_prompt_in_messages(messages_json: str, guided_prompt: str, general_prompt: str) -> str:
    """:func:`swap_prompt` for a chat rendered as JSON messages (API models): swapped inside the last message holding it."""
    messages = json.loads(messages_json)
    for message in reversed(messages):
        content = message.get("content")
        swapped = _replace_last(content, guided_prompt, general_prompt) if isinstance(content, str) else None
        if swapped is not None:
            message["content"] = swapped
            # lm-eval's API models serialise chats with ensure_ascii=False; keep the general request identical in form.
            return json.dumps(messages, ensure_ascii=False)
    raise ContamError("no chat message of the rendered context contains the guided prompt", field="doc_to_text")


def general_context(context: Any, guided_prompt: str, general_prompt: str) -> Any:
    """The general request's context, in the same form lm-eval rendered the guided one (text or JSON chat)."""
    if isinstance(context, str):
        return swap_prompt(context, guided_prompt, general_prompt)
    if is_json_chat(context):
        return type(context)(swap_prompt_in_messages(context.prompt, guided_prompt, general_prompt))
    raise ContamError(f"expected a rendered text or JSON chat context, got {type(context).__name__}", field="doc_to_text")
