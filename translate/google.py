"""The ``google`` backend: English question text to Russian through deep-translator's GoogleTranslator.

What this adds to the library, and why:

* **Deduplication and a cache.** Google rate-limits and then blocks after a few hundred
  requests, and question texts repeat a lot, so each distinct text is requested once per run and
  once ever (:class:`translate.cache.TranslationCache`, keyed by backend, languages and text).
* **A timeout.** ``GoogleTranslator.translate`` calls the module-level ``requests.get`` with no
  timeout and offers no way to pass one, so a stalled connection hangs a run for ever. The seam is
  the name ``requests`` inside ``deep_translator.google``: for the duration of one call we put
  there a small object whose ``get`` sends the same request through our own ``requests.Session``
  (connections reused) with ``timeout=``. Everything else, the URL, the parameters, the status
  checks and the HTML parsing, stays deep-translator's own code.
* **Bounded retries** with exponential backoff on 429 (TooManyRequests), other HTTP errors
  (RequestError, mostly 5xx), timeouts and dropped connections.
* **Echoes count as failures.** When Google cannot translate it returns the input, which
  deep-translator hands back as if it were a translation (and in one branch returns ``None``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import deep_translator.google as deep_translator_google
import requests
from deep_translator import GoogleTranslator
from deep_translator.exceptions import (
    NotValidLength,
    NotValidPayload,
    RequestError,
    TooManyRequests,
    TranslationNotFound,
)

from translate.base import is_echo
from translate.cache import TranslationCache

BACKEND_NAME = "google"
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF_S = 2.0
MAX_BACKOFF_S = 120.0

# Only one call at a time may have the module-level name swapped (see _requests_with_timeout).
_SWAP_LOCK = threading.Lock()


class TranslationFailed(Exception):
    """One text could not be translated; ``retryable`` says whether trying again may help."""

    def __init__(self, reason: str, *, retryable: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class _RequestsWithTimeout:
    """Stands in for the ``requests`` module inside deep_translator.google for one call.

    deep-translator only uses ``requests.get``; ours sends it through ``session`` with a timeout
    and remembers the status code, which deep-translator's RequestError does not carry.
    """

    def __init__(self, session: requests.Session, timeout_s: float) -> None:
        self.session = session
        self.timeout_s = timeout_s
        self.last_status: int | None = None

    def get(self, url: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", self.timeout_s)
        response = self.session.get(url, **kwargs)
        self.last_status = response.status_code
        return response


@contextlib.contextmanager
def _requests_with_timeout(shim: _RequestsWithTimeout) -> Iterator[None]:
    with _SWAP_LOCK:
        original = deep_translator_google.requests
        deep_translator_google.requests = shim
        try:
            yield
        finally:
            deep_translator_google.requests = original


class GoogleBackend:
    """Translate each question's English ``question`` text with Google Translate.

    ``realise`` returns one Russian text per question, ``None`` where translation failed; the
    reason for each failure is in ``last_failures`` (position in the call -> reason).
    ``requests_sent`` counts HTTP requests, retries included.
    """

    name = BACKEND_NAME

    def __init__(
        self,
        *,
        source_lang: str = "en",
        target_lang: str = "ru",
        cache: TranslationCache | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = DEFAULT_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        sleep: Callable[[float], None] = time.sleep,
        session: requests.Session | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout must be positive, got {timeout_s}")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.source_lang = source_lang
        self.target_lang = target_lang
        self.cache = cache if cache is not None else TranslationCache()
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self._sleep = sleep
        self._translator = GoogleTranslator(source=source_lang, target=target_lang)
        self._shim = _RequestsWithTimeout(session or requests.Session(), timeout_s)
        self.requests_sent = 0
        self.last_failures: dict[int, str] = {}

    def settings(self) -> dict[str, object]:
        """What this backend was run with, for the output's ``info``."""
        return {
            "source_lang": self.source_lang,
            "target_lang": self.target_lang,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "backoff_s": self.backoff_s,
            "cache": self.cache.path,
        }

    def realise(self, questions: Sequence[Mapping[str, object]]) -> list[str | None]:
        return self.translate_texts([str(question["question"]) for question in questions])

    def translate_texts(self, texts: Sequence[str]) -> list[str | None]:
        """Translate ``texts``: each distinct text looked up in the cache, else requested once."""
        unique = list(dict.fromkeys(texts))
        known = self.cache.lookup(self.name, self.source_lang, self.target_lang, unique)
        reasons: dict[str, str] = {}
        for text in unique:
            if text in known:
                continue
            try:
                known[text] = self._translate_with_retries(text)
            except TranslationFailed as failure:
                reasons[text] = failure.reason
                continue
            self.cache.store(self.name, self.source_lang, self.target_lang, text, known[text])
        self.last_failures = {position: reasons[text] for position, text in enumerate(texts) if text in reasons}
        return [known.get(text) for text in texts]

    def _translate_with_retries(self, text: str) -> str:
        attempts = self.retries + 1
        for attempt in range(attempts):
            if attempt:
                self._sleep(min(self.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S))
            try:
                return self._request_translation(text)
            except TranslationFailed as failure:
                if not failure.retryable:
                    raise
                last = failure
        raise TranslationFailed(f"{last.reason} (gave up after {attempts} attempts)", retryable=False)

    def _request_translation(self, text: str) -> str:
        """One request through deep-translator, its outcome turned into a text or a TranslationFailed."""
        self._shim.last_status = None
        self.requests_sent += 1
        try:
            with _requests_with_timeout(self._shim):
                translation = self._translator.translate(text)
        except TooManyRequests:
            raise TranslationFailed("HTTP 429 Too Many Requests", retryable=True) from None
        except RequestError:
            raise TranslationFailed(f"HTTP {self._shim.last_status} from the server", retryable=True) from None
        except requests.Timeout:
            raise TranslationFailed(f"no answer within {self.timeout_s:g} s", retryable=True) from None
        except requests.RequestException as error:
            raise TranslationFailed(f"connection failed: {type(error).__name__}", retryable=True) from None
        except TranslationNotFound:
            raise TranslationFailed("the result page held no translation", retryable=False) from None
        except (NotValidLength, NotValidPayload):
            raise TranslationFailed("text is empty or longer than 5000 characters", retryable=False) from None
        if is_echo(text, translation):
            raise TranslationFailed("echo: the translator returned the English text unchanged", retryable=False)
        return translation
