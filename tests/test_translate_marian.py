"""The marian backend with a tiny Marian model and tokenizer that the test builds, trains and saves.

The tokenizer is real: SentencePiece models trained on the sentences below plus a vocab.json, as
in an opus-mt repository. The model is a one-layer MarianMTModel trained for a few hundred steps
until it reproduces the Russian of each training pair, so the expected output is known. It is
loaded from its folder by the same code path a hub model goes through.
"""

from __future__ import annotations

import io
import json
import warnings

import pytest

torch = pytest.importorskip("torch")
spm = pytest.importorskip("sentencepiece")
transformers = pytest.importorskip("transformers")

from helpers import run_stage  # noqa: E402

from translate.cache import TranslationCache  # noqa: E402
from translate.marian import MarianBackend, ModelNotAvailable, backend_name, load_marian  # noqa: E402

PAIRS = {
    "Is there a red cube?": "Есть ли красный куб?",
    "How many spheres are there?": "Сколько здесь шаров?",
    "What color is the small cylinder?": "Какого цвета маленький цилиндр?",
    "What material is the large sphere made of?": "Из какого материала сделан большой шар?",
    "Are there any other things of the same shape?": "Есть ли другие предметы той же формы?",
    "Is the cube made of metal?": "Куб сделан из металла?",
}
UNSEEN = ["Is there a small sphere?", "What color is the cube?", "How many red things?"]


def train_sentencepiece(sentences, path):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model, vocab_size=48, model_type="unigram",
        character_coverage=1.0, hard_vocab_limit=False, bos_id=-1, eos_id=-1, pad_id=-1, unk_id=0,
        minloglevel=2, num_threads=1,
    )
    path.write_bytes(model.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]


@pytest.fixture(scope="session")
def one_torch_thread():
    """Tiny matrices gain nothing from threads, and on 2 shared cores torch's busy-waiting
    worker threads make them many times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_marian(tmp_path_factory, one_torch_thread):
    """Folder of a tiny trained Marian model, saved as save_pretrained saves an opus-mt model."""
    folder = tmp_path_factory.mktemp("tiny-opus-mt-en-ru")
    source_pieces = train_sentencepiece(PAIRS.keys(), folder / "source.spm")
    target_pieces = train_sentencepiece(PAIRS.values(), folder / "target.spm")
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in source_pieces + target_pieces:
        vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
        tokenizer = transformers.MarianTokenizer(
            source_spm=str(folder / "source.spm"), target_spm=str(folder / "target.spm"),
            vocab=str(folder / "vocab.json"), source_lang="en", target_lang="ru",
        )
    config = transformers.MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(vocab), d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_position_embeddings=64, pad_token_id=vocab["<pad>"], eos_token_id=0,
        decoder_start_token_id=vocab["<pad>"], forced_eos_token_id=0,
    )
    with torch.random.fork_rng():  # seeded weights without touching the global torch RNG
        torch.manual_seed(0)
        model = transformers.MarianMTModel(config)
        train_to_memorise(model, tokenizer, vocab["<pad>"])
    model.generation_config.max_length = 64
    model.generation_config.num_beams = 2
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def train_to_memorise(model, tokenizer, pad_id, steps=400):
    batch = tokenizer(list(PAIRS), text_target=list(PAIRS.values()), return_tensors="pt", padding=True)
    batch["labels"][batch["labels"] == pad_id] = -100
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        loss = model(**batch).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()


def questions(texts):
    return [{"question": text, "answer": "yes"} for text in texts]


def test_a_saved_model_loads_from_its_folder_and_translates_a_batch(tiny_marian):
    backend = MarianBackend(str(tiny_marian), batch_size=4)
    assert backend.name == f"marian:{tiny_marian}"
    assert backend.realise(questions(PAIRS)) == list(PAIRS.values())
    assert backend.last_failures == {}
    assert backend.settings()["num_beams"] == 2


def test_batched_output_equals_one_by_one_output(tiny_marian):
    texts = [*PAIRS, *UNSEEN]
    batched = MarianBackend(str(tiny_marian), batch_size=len(texts))
    one_by_one = MarianBackend(str(tiny_marian), batch_size=1)
    assert batched.translate_texts(texts) == one_by_one.translate_texts(texts)
    # Also the raw model output, before the echo check, padding included in one batch.
    assert batched.generate(texts) == [one_by_one.generate([text])[0] for text in texts]


def test_duplicates_are_translated_once_and_the_cache_is_used(tiny_marian, tmp_path):
    texts = ["Is there a red cube?", "Is the cube made of metal?", "Is there a red cube?"]
    with TranslationCache(tmp_path / "cache.sqlite") as cache:
        name = backend_name(str(tiny_marian))
        cache.store(name, "en", "ru", "Is the cube made of metal?", "Из кэша")
        backend = MarianBackend(str(tiny_marian), cache=cache)
        assert backend.translate_texts(texts) == ["Есть ли красный куб?", "Из кэша", "Есть ли красный куб?"]
        assert cache.lookup(name, "en", "ru", texts) == {
            "Is there a red cube?": "Есть ли красный куб?",
            "Is the cube made of metal?": "Из кэша",
        }


def test_a_missing_folder_is_not_available(tmp_path):
    with pytest.raises(ModelNotAvailable, match="no model folder"):
        load_marian(str(tmp_path / "no-such-model"))


def test_a_folder_without_a_model_is_not_available(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotAvailable):
        load_marian(str(tmp_path / "empty"))


def test_an_uncached_hub_model_offline_is_not_available(monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelNotAvailable, match="not in the local Hugging Face cache and HF_HUB_OFFLINE is set"):
        load_marian("ruclevr-tests/no-such-model")


def test_cli_writes_the_model_translations(tiny_marian, tmp_path):
    source = tmp_path / "questions.json"
    records = [{"question_index": i, "question": text, "answer": "yes"} for i, text in enumerate(PAIRS)]
    source.write_text(json.dumps({"info": {}, "questions": records}), encoding="utf-8")
    out = tmp_path / "questions_ru.json"
    assert run_stage("translate", "--questions", source, "--out", out, "--backend", "marian", "--model", tiny_marian,
                     "--batch-size", "4") == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [item["question_ru"] for item in document["questions"]] == list(PAIRS.values())
    assert {item["translator"] for item in document["questions"]} == {f"marian:{tiny_marian}"}
    assert {item["answer_ru"] for item in document["questions"]} == {"да"}
    assert document["info"]["translate"]["backend_settings"]["model"] == str(tiny_marian)


@pytest.mark.parametrize("model", ["/nonexistent/opus-mt-en-ru", "ruclevr-tests/no-such-model"])
def test_cli_names_a_model_it_cannot_load_and_suggests_native(model, tmp_path, capsys, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # never reach for the network
    source = tmp_path / "questions.json"
    source.write_text(json.dumps({"questions": [{"question": "Is it red?", "answer": "yes"}]}), encoding="utf-8")
    out = tmp_path / "questions_ru.json"
    assert run_stage("translate", "--questions", source, "--out", out, "--backend", "marian", "--model", model) == 2
    stderr = capsys.readouterr().err
    assert stderr.count("\n") == 1
    assert f"cannot load Marian model {model!r}" in stderr and "--backend native" in stderr
    assert not out.exists()
