"""A refused key is a configuration error, not an unavailable model.

HTTP 401 (authentication) and 403 (permission) mean the key or token is wrong, expired or
lacks access: every later request would fail the same way. Reported like a missing key
(exit 2, the receipt says so), never as an all-Unknown judgment that looks like success.
"""

from __future__ import annotations

import anthropic

from harness.errors import ConfigError
from harness.redact import redact

REFUSED_STATUSES = (401, 403)


def api_error(exc: anthropic.APIStatusError) -> tuple[str, str]:
    """The error's `type` in the API's body (`overloaded_error`, …; '' without one) and its
    message: the API's own, else the SDK's (its "Error code: 529 - {…}" dump of the body).
    The one reader of an API error's body (harness.model.messages reads it here too)."""
    kind, text = "", exc.message
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        kind = str(body["error"].get("type", ""))
        text = str(body["error"].get("message") or text)
    return kind, text


def credentials_refused(exc: BaseException, who: str) -> ConfigError | None:
    """The `ConfigError` for a 401/403 from the API (`who`: "the judge", "the citation
    audit"), or None for any other error."""
    if not isinstance(exc, anthropic.APIStatusError) or exc.status_code not in REFUSED_STATUSES:
        return None
    kind, text = api_error(exc)
    what = "authentication" if exc.status_code == 401 else "permission"
    return ConfigError(
        redact(
            f"the API refused the credentials of {who} ({what} failed: HTTP "
            f"{exc.status_code} {kind}: {text[:200]}); check ANTHROPIC_API_KEY or "
            "ANTHROPIC_AUTH_TOKEN (and ANTHROPIC_BASE_URL), or pass --replay FILE"
        ).replace("  ", " ")
    )
