"""The request rules of the real Messages API, for the loopback servers to enforce.

`check_messages(body)` returns None for a request the API accepts, else a `Refusal`: the
HTTP status, the API's error type and a message worded as the API words it. The rules
are the documented ones (Messages API reference, tool use, prompt caching, structured
outputs, the models overview, Message Batches); the allowed keys of every block come
from the installed SDK's own request types, so a field the SDK does not know is refused
as the API refuses it ("Extra inputs are not permitted").

What is checked:
- the top level: required `model`, `max_tokens`, `messages`; no unknown key; the model
  is one the SDK names (else 404 `not_found_error`, as the API answers an unknown model);
  `max_tokens` within the model's output limit; no sampling parameter (`temperature`,
  `top_p`, `top_k`) on the current models, which refuse them;
- the turns: roles `user`/`assistant` only, the first turn is the user's, roles
  alternate (the API would combine two turns of one role; a harness that sends them has
  lost track of its conversation, so this server refuses them), no empty content (a
  final assistant turn, a prefill or a `pause_turn` handed back, is let through);
- the blocks: types allowed per role, no unknown keys, text neither empty nor only
  whitespace, tool_use ids well formed and unique, every tool_use answered by a
  tool_result in the very next (user) turn, every tool_result answering a tool_use of
  the turn before, tool results before any other block of their turn;
- prompt caching: at most 4 `cache_control` breakpoints, `type` ephemeral, `ttl` 5m or
  1h, and no 1h breakpoint after a 5m one (in the order tools, system, messages); none
  on an empty text block;
- tools: names match `^[a-zA-Z0-9_-]{1,64}$` and are unique; `input_schema` is an object;
- structured outputs: `output_config.format` of type `json_schema` with a schema in the
  supported subset (every object closed with `additionalProperties: false`, no numeric
  or string-length bounds, `minItems` only 0 or 1, no external `$ref`, known types).

With `APIRULES_LOG=FILE` in the environment (it reaches the servers run as programs too)
every check appends one line to FILE, `ok` or `refused <message>`: how many requests a
test run sent through the rules, and which were refused.

`check_batch(body)` checks a Message Batches create: 1 to 100,000 requests, each
`custom_id` matching `^[a-zA-Z0-9_-]{1,64}$` and unique within the batch, no `stream` in
`params`. Each request's `params` are checked with `check_messages` when the batch is
processed, and a refused one ends `errored` with the API's `invalid_request_error`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, get_args

import anthropic.types as sdk
from anthropic.types import message_create_params

# The models overview and each model's page (platform.claude.com/docs/en/models/...):
# "Max output". Kept apart from harness.config on purpose: the server is the API's
# stand-in, so a wrong figure in the harness's table shows as a refusal here.
OUTPUT_LIMITS: dict[str, int] = {
    "claude-haiku-4-5": 64_000,
    "claude-haiku-4-5-20251001": 64_000,
    "claude-opus-4-5": 64_000,
    "claude-opus-4-5-20251101": 64_000,
}
DEFAULT_OUTPUT_LIMIT = 128_000  # every other model the SDK names

# Models that take sampling parameters (the 4.5 and 4.6 generation); the later ones
# refuse non-default temperature, top_p and top_k.
SAMPLING_MODELS = frozenset(
    {
        "claude-haiku-4-5",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-5",
        "claude-opus-4-5-20251101",
        "claude-opus-4-6",
        "claude-sonnet-4-6",
    }
)

MAX_BREAKPOINTS = 4
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_BATCH_REQUESTS = 100_000


def known_models() -> frozenset[str]:
    """The model ids the installed SDK names (`anthropic.types.Model`)."""
    names: set[str] = set()
    for part in get_args(sdk.Model):
        names.update(a for a in get_args(part) if isinstance(a, str))
    return frozenset(names)


MODELS = known_models()


def _keys(typed: Any) -> frozenset[str]:
    keys: set[str] = set()
    for klass in getattr(typed, "__mro__", (typed,)):
        keys.update(getattr(klass, "__annotations__", {}))
    return frozenset(keys)


TOP_LEVEL = _keys(message_create_params.MessageCreateParamsBase) | {"stream"}
BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": _keys(sdk.TextBlockParam),
    "image": _keys(sdk.ImageBlockParam),
    "document": _keys(sdk.DocumentBlockParam),
    "search_result": _keys(sdk.SearchResultBlockParam),
    "tool_use": _keys(sdk.ToolUseBlockParam),
    "tool_result": _keys(sdk.ToolResultBlockParam),
    "thinking": _keys(sdk.ThinkingBlockParam),
    "redacted_thinking": _keys(sdk.RedactedThinkingBlockParam),
}
ROLE_BLOCKS = {
    "user": {"text", "image", "document", "search_result", "tool_result"},
    "assistant": {"text", "tool_use", "thinking", "redacted_thinking"},
}
TOOL_KEYS = _keys(sdk.ToolParam)
SCHEMA_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}
SCHEMA_UNSUPPORTED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
)


@dataclass(frozen=True)
class Refusal:
    """What the API answers a request it refuses."""

    message: str
    status: int = 400
    kind: str = "invalid_request_error"

    def body(self) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": self.kind, "message": self.message},
            "request_id": "req_strict",
        }


class _Refused(Exception):
    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


def _no(message: str, status: int = 400, kind: str = "invalid_request_error") -> _Refused:
    return _Refused(Refusal(message, status, kind))


def output_limit(model: str) -> int:
    return OUTPUT_LIMITS.get(model, DEFAULT_OUTPUT_LIMIT)


def check_messages(body: Any, *, where: str = "") -> Refusal | None:
    """None if the API accepts this Messages request, else how it refuses it.
    `where` prefixes every path (a batch request: `requests.3.params.`)."""
    refusal: Refusal | None = None
    try:
        _Request(where).check(body)
    except _Refused as exc:
        refusal = exc.refusal
    _log("ok" if refusal is None else f"refused {refusal.message[:200]}")
    return refusal


def _log(line: str) -> None:
    path = os.environ.get("APIRULES_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line.replace("\n", " ") + "\n")


def check_batch(body: Any) -> Refusal | None:
    """None if the API accepts this Message Batches create, else how it refuses it."""
    if not isinstance(body, dict):
        return Refusal("request body must be a JSON object")
    if "requests" not in body:
        return Refusal("requests: Field required")
    if set(body) - {"requests"}:
        return Refusal(f"{sorted(set(body) - {'requests'})[0]}: Extra inputs are not permitted")
    requests = body["requests"]
    if not isinstance(requests, list) or not requests:
        return Refusal("requests: List should have at least 1 item after validation, not 0")
    if len(requests) > MAX_BATCH_REQUESTS:
        return Refusal(
            f"requests: List should have at most {MAX_BATCH_REQUESTS} items after "
            f"validation, not {len(requests)}"
        )
    seen: set[str] = set()
    for i, request in enumerate(requests):
        if not isinstance(request, dict) or set(request) - {"custom_id", "params"}:
            return Refusal(f"requests.{i}: Extra inputs are not permitted")
        cid = request.get("custom_id")
        if not isinstance(cid, str) or not CUSTOM_ID.match(cid):
            return Refusal(
                f"requests.{i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        if cid in seen:
            return Refusal(f"requests: custom_id values must be unique; found duplicate: {cid}")
        seen.add(cid)
        params = request.get("params")
        if not isinstance(params, dict):
            return Refusal(f"requests.{i}.params: Field required")
        if "stream" in params:
            return Refusal(f"requests.{i}.params.stream: Extra inputs are not permitted")
    return None


class _Request:
    def __init__(self, where: str) -> None:
        self.where = where
        self.breakpoints = 0
        self.seen_5m = False

    def at(self, path: str) -> str:
        return f"{self.where}{path}"

    def check(self, body: Any) -> None:
        if not isinstance(body, dict):
            raise _no("request body must be a JSON object")
        for key in body:
            if key not in TOP_LEVEL and key not in ("temperature", "top_p", "top_k"):
                raise _no(f"{self.at(key)}: Extra inputs are not permitted")
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                raise _no(f"{self.at(key)}: Field required")
        model = body["model"]
        if not isinstance(model, str) or model not in MODELS:
            raise _no(f"model: {model}", 404, "not_found_error")
        tokens = body["max_tokens"]
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
            raise _no(f"{self.at('max_tokens')}: Input should be a valid integer, at least 1")
        if tokens > output_limit(model):
            raise _no(
                f"max_tokens: {tokens} > {output_limit(model)}, which is the maximum allowed "
                f"number of output tokens for {model}"
            )
        for name in ("temperature", "top_p", "top_k"):
            if name in body and model not in SAMPLING_MODELS:
                raise _no(f"{name}: `{name}` is not supported for this model ({model})")
        if "temperature" in body and "top_p" in body:
            raise _no("`temperature` and `top_p` cannot both be specified for this model.")
        if "cache_control" in body:
            self.cache_control(body["cache_control"], "cache_control")
        self.tools(body.get("tools"))
        self.system(body.get("system"))
        self.messages(body["messages"])
        if "output_config" in body:
            self.output_config(body["output_config"])
        if self.breakpoints > MAX_BREAKPOINTS:
            raise _no(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {self.breakpoints}."
            )

    # -- caching ---------------------------------------------------------------------

    def cache_control(self, value: Any, path: str, *, empty_text: bool = False) -> None:
        if not isinstance(value, dict) or value.get("type") != "ephemeral":
            raise _no(f"{self.at(path)}.type: Input should be 'ephemeral'")
        if set(value) - _keys(sdk.CacheControlEphemeralParam):
            raise _no(f"{self.at(path)}: Extra inputs are not permitted")
        ttl = value.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            raise _no(f"{self.at(path)}.ttl: Input should be '5m' or '1h'")
        if empty_text:
            raise _no(f"{self.at(path)}: cache_control cannot be set for empty text blocks")
        if ttl == "1h" and self.seen_5m:
            raise _no(
                "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control "
                "block. Note that blocks are processed in the following order: `tools`, "
                "`system`, `messages`."
            )
        self.seen_5m = self.seen_5m or ttl == "5m"
        self.breakpoints += 1

    # -- tools and system ---------------------------------------------------------------

    def tools(self, tools: Any) -> None:
        if tools is None:
            return
        if not isinstance(tools, list):
            raise _no(f"{self.at('tools')}: Input should be a valid list")
        names: set[str] = set()
        for i, tool in enumerate(tools):
            path = f"tools.{i}"
            if not isinstance(tool, dict):
                raise _no(f"{self.at(path)}: Input should be a valid dictionary")
            if tool.get("type", "custom") != "custom":
                continue  # a server tool: its own shape
            extra = set(tool) - TOOL_KEYS
            if extra:
                raise _no(f"{self.at(path)}.{sorted(extra)[0]}: Extra inputs are not permitted")
            name = tool.get("name")
            if not isinstance(name, str) or not TOOL_NAME.match(name):
                raise _no(
                    f"{self.at(path)}.custom.name: String should match pattern "
                    "'^[a-zA-Z0-9_-]{1,64}$'"
                )
            if name in names:
                raise _no(f"tools: Tool names must be unique. Duplicate name: {name}")
            names.add(name)
            schema = tool.get("input_schema")
            if not isinstance(schema, dict) or schema.get("type") != "object":
                raise _no(f"{self.at(path)}.custom.input_schema.type: Input should be 'object'")
            if "cache_control" in tool:
                self.cache_control(tool["cache_control"], f"{path}.cache_control")

    def system(self, system: Any) -> None:
        if system is None or isinstance(system, str):
            return
        if not isinstance(system, list):
            raise _no(f"{self.at('system')}: Input should be a valid string or list")
        for i, block in enumerate(system):
            path = f"system.{i}"
            if not isinstance(block, dict) or block.get("type") != "text":
                raise _no(f"{self.at(path)}.type: Input should be 'text'")
            self.text(block, path)

    # -- turns and blocks -----------------------------------------------------------------

    def messages(self, messages: Any) -> None:
        if not isinstance(messages, list) or not messages:
            raise _no(f"{self.at('messages')}: at least one message is required")
        previous_uses: list[str] = []
        all_ids: set[str] = set()
        last_role = ""
        for n, turn in enumerate(messages):
            path = f"messages.{n}"
            if not isinstance(turn, dict) or set(turn) - {"role", "content"}:
                raise _no(f"{self.at(path)}: Extra inputs are not permitted")
            role = turn.get("role")
            if role not in ROLE_BLOCKS:
                raise _no(f"{self.at(path)}.role: Input should be 'user' or 'assistant'")
            if n == 0 and role != "user":
                raise _no(f'{self.at("messages")}: first message must use the "user" role')
            if role == last_role:
                raise _no(
                    f'{self.at("messages")}: roles must alternate between "user" and '
                    f'"assistant", but found multiple "{role}" roles in a row'
                )
            last_role = role
            blocks = self.blocks(turn.get("content"), path, role, n == len(messages) - 1)
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if previous_uses:
                missing = [u for u in previous_uses if u not in results]
                if role != "user" or missing:
                    raise _no(
                        f"{self.at(f'messages.{n - 1}')}: `tool_use` ids were found without "
                        f"`tool_result` blocks immediately after: {', '.join(missing)}. Each "
                        "`tool_use` block must have a corresponding `tool_result` block in "
                        "the next message."
                    )
            for m, block in enumerate(blocks):
                if block.get("type") == "tool_result" and block["tool_use_id"] not in (
                    previous_uses
                ):
                    raise _no(
                        f"{self.at(f'{path}.content.{m}')}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block['tool_use_id']}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous "
                        "message."
                    )
            kinds = [b.get("type") for b in blocks]
            if "tool_result" in kinds:
                first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), None)
                if first_other is not None and "tool_result" in kinds[first_other:]:
                    raise _no(
                        f"{self.at(path)}: tool_result blocks must come before any other "
                        "content in the user message"
                    )
            previous_uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            for use_id in previous_uses:
                if use_id in all_ids:
                    raise _no(f"{self.at(path)}: `tool_use` ids must be unique: {use_id}")
                all_ids.add(use_id)
        if last_role == "assistant" and previous_uses:
            raise _no(
                f"{self.at(f'messages.{len(messages) - 1}')}: `tool_use` ids were found "
                f"without `tool_result` blocks immediately after: "
                f"{', '.join(previous_uses)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )

    def blocks(self, content: Any, path: str, role: str, last: bool) -> list[dict[str, Any]]:
        if isinstance(content, str):
            if not content.strip() and not (last and role == "assistant"):
                raise _no(
                    f"{self.at(path)}: all messages must have non-empty content except for "
                    "the optional final assistant message"
                )
            return []
        if not isinstance(content, list) or not content:
            raise _no(
                f"{self.at(path)}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        out: list[dict[str, Any]] = []
        for m, block in enumerate(content):
            where = f"{path}.content.{m}"
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in ROLE_BLOCKS[role]:
                raise _no(
                    f"{self.at(where)}.type: a block of type '{kind}' is not permitted in a "
                    f"{role} message"
                )
            assert isinstance(block, dict)
            extra = set(block) - BLOCK_KEYS[str(kind)]
            if extra:
                raise _no(f"{self.at(where)}.{sorted(extra)[0]}: Extra inputs are not permitted")
            if kind == "text":
                self.text(block, where)
            elif kind == "tool_use":
                self.tool_use(block, where)
            elif kind == "tool_result":
                self.tool_result(block, where)
            elif "cache_control" in block:
                self.cache_control(block["cache_control"], f"{where}.cache_control")
            out.append(block)
        return out

    def text(self, block: dict[str, Any], where: str) -> None:
        value = block.get("text")
        if not isinstance(value, str):
            raise _no(f"{self.at(where)}.text: Field required")
        if "cache_control" in block:
            self.cache_control(
                block["cache_control"], f"{where}.cache_control", empty_text=not value
            )
        if not value:
            raise _no(f"{self.at(where)}.text: text content blocks must be non-empty")
        if not value.strip():
            raise _no(
                f"{self.at('messages')}: text content blocks must contain non-whitespace text"
            )

    def tool_use(self, block: dict[str, Any], where: str) -> None:
        use_id, name = block.get("id"), block.get("name")
        if not isinstance(use_id, str) or not TOOL_USE_ID.match(use_id):
            raise _no(f"{self.at(where)}.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
        if not isinstance(name, str) or not name:
            raise _no(f"{self.at(where)}.name: Field required")
        if not isinstance(block.get("input"), dict):
            raise _no(f"{self.at(where)}.input: Input should be a valid dictionary")
        if "cache_control" in block:
            self.cache_control(block["cache_control"], f"{where}.cache_control")

    def tool_result(self, block: dict[str, Any], where: str) -> None:
        if not isinstance(block.get("tool_use_id"), str):
            raise _no(f"{self.at(where)}.tool_use_id: Field required")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise _no(f"{self.at(where)}.is_error: Input should be a valid boolean")
        content = block.get("content", "")
        if isinstance(content, list):
            for k, inner in enumerate(content):
                kind = inner.get("type") if isinstance(inner, dict) else None
                if kind not in ("text", "image", "document", "search_result"):
                    raise _no(f"{self.at(where)}.content.{k}.type: Input tag '{kind}' not allowed")
                if kind == "text":
                    self.text(inner, f"{where}.content.{k}")
        elif not isinstance(content, str):
            raise _no(f"{self.at(where)}.content: Input should be a valid string or list")
        if "cache_control" in block:
            self.cache_control(block["cache_control"], f"{where}.cache_control")

    # -- structured outputs ---------------------------------------------------------------

    def output_config(self, config: Any) -> None:
        if not isinstance(config, dict) or set(config) - {"format", "effort", "task_budget"}:
            raise _no(f"{self.at('output_config')}: Extra inputs are not permitted")
        fmt = config.get("format")
        if fmt is None:
            return
        if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
            raise _no(f"{self.at('output_config.format.type')}: Input should be 'json_schema'")
        if set(fmt) - {"type", "schema"} or not isinstance(fmt.get("schema"), dict):
            raise _no(f"{self.at('output_config.format.schema')}: Field required")
        _schema(fmt["schema"], "output_config.format.schema", self.where)


def _schema(schema: Any, path: str, where: str) -> None:
    here = f"{where}{path}"
    if not isinstance(schema, dict):
        raise _no(f"{here}: a schema must be an object")
    for key in SCHEMA_UNSUPPORTED:
        if key in schema:
            raise _no(f"{here}: The '{key}' keyword is not supported in structured outputs")
    ref = schema.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        raise _no(f"{here}: External '$ref' is not supported in structured outputs")
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for k in kinds:
        if k not in SCHEMA_TYPES:
            raise _no(f"{here}.type: Unsupported type '{k}'")
    if "object" in kinds:
        if schema.get("additionalProperties") is not False:
            raise _no(
                f"{here}: For 'object' type, 'additionalProperties' must be explicitly set to false"
            )
        properties = schema.get("properties", {})
        for name, sub in properties.items():
            _schema(sub, f"{path}.properties.{name}", where)
        for name in schema.get("required", []):
            if name not in properties:
                raise _no(f"{here}.required: '{name}' is not among the properties")
    if "array" in kinds:
        if schema.get("minItems", 0) not in (0, 1):
            raise _no(f"{here}.minItems: only 0 and 1 are supported in structured outputs")
        if "items" in schema:
            _schema(schema["items"], f"{path}.items", where)
    if "enum" in schema:
        values = schema["enum"]
        if not isinstance(values, list) or not values:
            raise _no(f"{here}.enum: must be a non-empty list")
        if any(isinstance(v, (dict, list)) for v in values):
            raise _no(f"{here}.enum: only strings, numbers, booleans and null are supported")
    for combinator in ("anyOf", "allOf"):
        for k, sub in enumerate(schema.get(combinator, [])):
            _schema(sub, f"{path}.{combinator}.{k}", where)
    for name, sub in schema.get("$defs", {}).items():
        _schema(sub, f"{path}.$defs.{name}", where)
