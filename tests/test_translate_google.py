"""The google backend runs deep-translator's own GoogleTranslator against a local fake of Google's page.

Only the server is fake (tests/fake_google.py): deep-translator builds and sends the request over a
real socket and parses the HTML itself, so these tests also catch a change in how it does that.
"""

from __future__ import annotations

import time

import pytest
from deep_translator.constants import BASE_URLS
from fake_google import FakeGoogle

from translate.base import is_echo
from translate.cache import TranslationCache
from translate.google import GoogleBackend

TRANSLATIONS = {
    "Is there a red cube?": "Есть ли красный куб?",
    "How many spheres are there?": "Сколько здесь шаров?",
    "What color is the small cylinder?": "Какого цвета маленький цилиндр?",
}


@pytest.fixture
def google(monkeypatch):
    """Point deep-translator at a local fake of translate.google.com/m for one test."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    fake = FakeGoogle().start()
    fake.translations.update(TRANSLATIONS)
    # GoogleTranslator reads its URL from this dict when constructed.
    monkeypatch.setitem(BASE_URLS, "GOOGLE_TRANSLATE", fake.url)
    yield fake
    fake.stop()


class Sleeps(list):
    """Records backoff waits instead of sleeping them, so retries cost no test time."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def backend(**kwargs) -> GoogleBackend:
    kwargs.setdefault("sleep", Sleeps())
    kwargs.setdefault("timeout_s", 2.0)
    return GoogleBackend(**kwargs)


def questions(*texts: str) -> list[dict[str, str]]:
    return [{"question": text, "answer": "yes"} for text in texts]


def test_translates_through_the_result_page_and_requests_each_text_once(google):
    texts = ["Is there a red cube?", "How many spheres are there?", "Is there a red cube?"]
    google_backend = backend()
    assert google_backend.realise(questions(*texts)) == [
        "Есть ли красный куб?",
        "Сколько здесь шаров?",
        "Есть ли красный куб?",
    ]
    assert google.requests == ["Is there a red cube?", "How many spheres are there?"]
    assert google_backend.requests_sent == 2
    assert google.params[0]["sl"] == "en" and google.params[0]["tl"] == "ru"
    assert google_backend.last_failures == {}


def test_a_persistent_cache_answers_without_a_second_request(google, tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    with TranslationCache(cache_path) as cache:
        assert backend(cache=cache).translate_texts(list(TRANSLATIONS)) == list(TRANSLATIONS.values())
    assert len(google.requests) == 3
    with TranslationCache(cache_path) as cache:  # a later run, a new connection to the same file
        again = backend(cache=cache)
        assert again.translate_texts(list(TRANSLATIONS)) == list(TRANSLATIONS.values())
        assert again.requests_sent == 0
        # The key includes the languages: the same text to another language is not a hit.
        assert cache.lookup("google", "en", "uk", TRANSLATIONS) == {}
    assert len(google.requests) == 3


def test_429_and_500_are_retried_with_exponential_backoff(google):
    google.script("Is there a red cube?", "429", "500", "503")
    sleeps = Sleeps()
    google_backend = backend(retries=3, backoff_s=0.5, sleep=sleeps)
    assert google_backend.translate_texts(["Is there a red cube?"]) == ["Есть ли красный куб?"]
    assert google.requests == ["Is there a red cube?"] * 4
    assert sleeps == [0.5, 1.0, 2.0]


def test_retries_are_bounded_and_the_failure_is_reported_without_losing_the_others(google, tmp_path):
    google.script("Is there a red cube?", *["429"] * 10)
    google.script("How many spheres are there?", *["500"] * 10)
    with TranslationCache(tmp_path / "cache.sqlite") as cache:
        google_backend = backend(retries=2, backoff_s=0.01, cache=cache)
        texts = ["Is there a red cube?", "What color is the small cylinder?", "How many spheres are there?"]
        assert google_backend.translate_texts(texts) == [None, "Какого цвета маленький цилиндр?", None]
        assert google.requests.count("Is there a red cube?") == 3
        assert google.requests.count("How many spheres are there?") == 3
        assert google_backend.last_failures == {
            0: "HTTP 429 Too Many Requests (gave up after 3 attempts)",
            2: "HTTP 500 from the server (gave up after 3 attempts)",
        }
        # The success is kept, the failures are not cached (a later run retries them).
        assert cache.lookup("google", "en", "ru", texts) == {
            "What color is the small cylinder?": "Какого цвета маленький цилиндр?"
        }


def test_a_hanging_server_times_out_and_is_retried(google):
    google.script("Is there a red cube?", "hang")
    google_backend = backend(timeout_s=0.3, retries=1, backoff_s=0.0)
    started = time.monotonic()
    assert google_backend.translate_texts(["Is there a red cube?"]) == ["Есть ли красный куб?"]
    assert time.monotonic() - started < 5
    assert google.requests == ["Is there a red cube?"] * 2


def test_a_server_that_always_hangs_fails_with_a_timeout_reason(google):
    google.script("Is there a red cube?", "hang", "hang")
    google_backend = backend(timeout_s=0.3, retries=1, backoff_s=0.0)
    started = time.monotonic()
    assert google_backend.translate_texts(["Is there a red cube?"]) == [None]
    assert time.monotonic() - started < 5
    assert google_backend.last_failures == {0: "no answer within 0.3 s (gave up after 2 attempts)"}


def test_the_timeout_is_restored_after_each_call(google):
    import deep_translator.google
    import requests

    backend(timeout_s=0.3).translate_texts(["Is there a red cube?"])
    assert deep_translator.google.requests is requests


def test_an_echo_is_a_failure_and_is_not_cached(google):
    google.script("Is there a red cube?", "echo")
    google_backend = backend(retries=3)
    assert google_backend.translate_texts(["Is there a red cube?"]) == [None]
    assert google_backend.last_failures == {0: "echo: the translator returned the English text unchanged"}
    assert google.requests == ["Is there a red cube?"]  # an echo is an answer, not a transient error
    assert google_backend.cache.lookup("google", "en", "ru", ["Is there a red cube?"]) == {}
    # The next call asks again and gets the real translation.
    assert google_backend.translate_texts(["Is there a red cube?"]) == ["Есть ли красный куб?"]


def test_a_page_without_a_result_is_a_failure(google):
    google.script("How many spheres are there?", "no-result")
    google_backend = backend()
    assert google_backend.translate_texts(["How many spheres are there?"]) == [None]
    assert google_backend.last_failures == {0: "the result page held no translation"}


def test_a_dead_server_is_a_connection_failure(google, monkeypatch):
    google.stop()
    google_backend = backend(retries=1, backoff_s=0.0)
    assert google_backend.translate_texts(["Is there a red cube?"]) == [None]
    assert google_backend.last_failures[0].startswith("connection failed: ConnectionError")


@pytest.mark.parametrize(
    ("text", "translation", "echo"),
    [("Is it red?", "Is it red?", True), ("Is it red?", " is it red? ", True), ("Is it red?", None, True),
     ("Is it red?", "", True), ("Is it red?", "Он красный?", False)],
)
def test_is_echo(text, translation, echo):
    assert is_echo(text, translation) is echo


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="timeout"):
        GoogleBackend(timeout_s=0)
    with pytest.raises(ValueError, match="retries"):
        GoogleBackend(retries=-1)
