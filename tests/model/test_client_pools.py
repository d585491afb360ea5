"""A wide client's connection pools share one TLS context, configured as each would be."""

from __future__ import annotations

import ssl
import time

import anthropic
import pytest

from harness.model.client import ClientSettings, build_client

KEY = "sk-ant-test-not-a-real-key"


def _contexts(client: anthropic.Anthropic) -> list[ssl.SSLContext]:
    transport = client._client._transport
    shards = getattr(transport, "_shards", [transport])
    return [shard._pool._ssl_context for shard in shards]


def test_the_pools_share_one_tls_context_as_the_sdk_builds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    wide = build_client(ClientSettings(connections=300)).client
    contexts = _contexts(wide)
    assert len(contexts) == 10 and all(c is contexts[0] for c in contexts)
    # The same settings as the context a default client builds for itself.
    plain = build_client(ClientSettings()).client
    (own,) = _contexts(plain)
    assert own is not contexts[0]
    for attribute in ("verify_mode", "check_hostname", "minimum_version", "options"):
        assert getattr(contexts[0], attribute) == getattr(own, attribute), attribute
    assert contexts[0].cert_store_stats() == own.cert_store_stats()  # the same CA certificates
    for client in (wide, plain):
        client.close()


def test_a_proxy_from_the_environment_gets_the_shared_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = build_client(ClientSettings(connections=70)).client
    shared = _contexts(client)[0]
    mounts = client._client._mounts
    proxied = [t for t in mounts.values() if t is not None]
    assert proxied and all(t._pool._ssl_context is shared for t in proxied)
    client.close()


def test_many_pools_are_cheap_to_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """One TLS context for all: 32 pools cost about what one does (each of its own
    context was 37 ms of CPU)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    build_client(ClientSettings()).client.close()  # imports and caches warmed
    started = time.process_time()
    one = build_client(ClientSettings())
    single = time.process_time() - started
    started = time.process_time()
    many = build_client(ClientSettings(connections=1024))  # 32 pools
    wide = time.process_time() - started
    assert len(_contexts(many.client)) == 32
    assert wide < 3 * single + 0.05, (wide, single)
    one.client.close()
    many.client.close()
