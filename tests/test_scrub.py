from __future__ import annotations

import base64
import logging
import sys
import uuid
from urllib.parse import quote

import pytest

from agent_hooks._scrub import (
    ScrubbingFilter,
    register_secret,
    register_url,
    scrub,
    scrub_http_library_logs,
    scrub_result,
    scrubbing_filter,
    scrubbing_installed,
)


def _unique(prefix: str = "sk") -> str:
    """A fresh value: the registry is process-wide, so each test scrubs values of its own."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def test_a_registered_value_is_replaced_wherever_it_appears() -> None:
    secret = _unique()
    register_secret(secret)
    assert scrub(f"key={secret}; again {secret}!") == "key=***; again ***!"


def test_long_parts_of_a_value_are_scrubbed_on_their_own() -> None:
    token = _unique("tok")
    register_secret(f"Bearer   {token}")
    assert scrub(f"Illegal header value b'{token}'") == "Illegal header value b'***'"
    assert scrub("Bearer is an ordinary word") == "Bearer is an ordinary word"


def test_short_values_are_not_scrubbed_so_logs_stay_readable() -> None:
    register_secret("acme")
    register_secret("")
    assert scrub("tenant acme") == "tenant acme"


def test_a_longer_secret_containing_a_shorter_one_is_replaced_whole() -> None:
    short = _unique()
    register_secret(short)
    register_secret(f"{short}-and-more")
    assert scrub(f"<{short}-and-more>") == "<***>"


def test_the_url_encoded_form_of_a_secret_is_scrubbed_too() -> None:
    secret = f"{_unique()}/+="
    register_secret(secret)
    assert scrub(f"GET /x?key={quote(secret, safe='')}") == "GET /x?key=***"


def test_url_credentials_and_credential_query_values_are_registered() -> None:
    user, password, token, signature = _unique("u"), _unique("p@ss"), _unique("t"), _unique("s")
    register_url(
        f"https://{user}:{password.replace('@', '%40')}@api.example.com/v1"
        f"?page=2&access_token={token}&X-Amz-Signature={signature}"
    )
    text = f"{user} {password} {token} {signature} {password.replace('@', '%40')} page=2"
    assert scrub(text) == "*** *** *** *** *** page=2"


def test_basic_auth_built_from_url_credentials_is_scrubbed() -> None:
    user, password = _unique("u"), _unique("p")
    register_url(f"http://{user}:{password}@127.0.0.1:1/")
    header = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    assert scrub(header) == "Basic ***"


def test_a_url_without_credentials_registers_nothing() -> None:
    register_url("https://api.example.com/v1?page=20000000&q=weather")
    register_url("http://[not a url")
    assert scrub("page=20000000 weather") == "page=20000000 weather"


def _record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("t", logging.WARNING, __file__, 1, msg, args, None)


def test_the_filter_rewrites_the_final_message_of_a_record_quoting_a_secret() -> None:
    secret = _unique()
    register_secret(secret)
    record = _record("header %s rejected (%d)", secret, 401)
    assert ScrubbingFilter().filter(record)
    assert record.getMessage() == "header *** rejected (401)"


def test_the_filter_keeps_the_template_of_a_record_without_secrets() -> None:
    register_secret(_unique())
    record = _record("status %d", 200)
    scrubbing_filter().filter(record)
    assert (record.msg, record.args) == ("status %d", (200,))


def test_the_filter_scrubs_tracebacks_and_stacks() -> None:
    secret = _unique()
    register_secret(secret)
    try:
        raise ValueError(f"bad key {secret}")
    except ValueError:
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    record.stack_info = f"Stack (most recent call last):\n  key={secret}"
    scrubbing_filter().filter(record)
    text = logging.Formatter().format(record)
    assert secret not in text
    assert "ValueError: bad key ***" in text


def test_installing_covers_child_loggers_through_the_handlers_they_reach_until_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = _unique()
    register_secret(secret)
    parent = logging.getLogger("scrub_test_parent")
    handler = logging.NullHandler()
    parent.addHandler(handler)
    try:
        with scrubbing_installed(parent), scrubbing_installed(parent):  # never stacked
            assert parent.filters.count(scrubbing_filter()) == 1
            assert handler.filters.count(scrubbing_filter()) == 1
            assert scrubbing_filter() in caplog.handler.filters  # the root's handlers too
            assert scrubbing_filter() in logging.getLogger("httpcore").filters
            with caplog.at_level(logging.INFO):
                logging.getLogger("scrub_test_parent.child").info("token %s", secret)
        assert scrubbing_filter() not in parent.filters + handler.filters + caplog.handler.filters
    finally:
        parent.removeHandler(handler)
    assert secret not in caplog.text
    assert "token ***" in caplog.text


def test_the_http_libraries_records_are_scrubbed_whatever_handler_receives_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = _unique()
    register_url(f"http://user:{secret}@127.0.0.1/")
    scrub_http_library_logs()
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("httpx").info("HTTP Request: GET http://user:%s@127.0.0.1/", secret)
        logging.getLogger("httpcore2.http11").debug("headers %r", [(b"x", secret.encode())])
    assert secret not in caplog.text
    assert "GET http://***@127.0.0.1/" in caplog.text


def test_tool_results_lose_declared_secrets_and_literal_headers_but_not_other_words() -> None:
    register_secret("literal-child-process-variable")  # a literal MCP server variable
    register_secret("application/json-literal-header", in_results=True)  # a literal header
    # A short value read from the environment; one no other test's text holds, since the registry
    # is process-wide (a "2" here scrubbed every later test's ports and status codes).
    register_secret("~Q~", always_whole=True)
    register_secret("env-read-result-secret", always_whole=True)
    text = (
        "mode literal-child-process-variable, format application/json-literal-header,"
        " version ~Q~, key env-read-result-secret"
    )
    assert scrub_result(text) == (
        "mode literal-child-process-variable, format ***, version ~Q~, key ***"
    )
    assert scrub(text) == "mode ***, format ***, version ***, key ***"  # logs lose them all


@pytest.mark.parametrize(
    ("secret", "quoted"),
    [
        ("sk-a/b+c=d", "sk-a\\/b+c=d"),  # PHP's json_encode: every / escaped
        ("sk-a/b+c=d", "sk-a%2Fb%2Bc%3Dd"),
        ("sk-a/b+c=d", "sk-a/b%2Bc%3Dd"),  # a URL path keeps its /
        ('sk-"quoted"\\x', 'sk-\\"quoted\\"\\\\x'),
        ("sk-caf\u00e9-secret", "sk-caf\\u00e9-secret"),
        ("sk-caf\u00e9/secret", "sk-caf\\u00e9\\/secret"),
        ("sk-a/b+c=d", "sk-a%2fb%2bc%3dd"),  # lowercase hex
        ("sk-a/b+c=d", "sk-a\\u002fb+c=d"),
        ("sk-a/b+c=d", "sk-a\\u002Fb\\u002Bc=d"),  # .NET's System.Text.Json escapes +
        ("sk-a/b+c=d", "sk-a\\/b\\u002bc%3Dd"),  # mixed forms
        ("sk-caf\u00e9 secret", "sk-caf%C3%A9+secret"),  # a form's space as +
        ("sk-\U0001f511-key", "sk-\\ud83d\\udd11-key"),  # a surrogate pair
    ],
    ids=[
        "json-slash", "percent", "percent-path", "json-quote-backslash", "json-ascii", "both",
        "percent-lowercase", "json-u-lowercase", "json-u-uppercase", "mixed", "plus-space",
        "json-surrogates",
    ],
)  # fmt: skip
def test_a_secret_is_scrubbed_in_its_quoted_forms(secret: str, quoted: str) -> None:
    """SPEC 16: an error body or URL that quotes a secret writes it escaped or encoded."""
    secret = f"{secret}-{uuid.uuid4().hex[:8]}"
    quoted = f"{quoted}-{secret.rsplit('-', 1)[1]}"
    register_secret(secret, always_whole=True)
    assert scrub(f'{{"message": "bad key {quoted}"}}') == '{"message": "bad key ***"}'
    assert scrub_result(f"echo {quoted}") == "echo ***"
