"""The quality guard's checks, and its rates on the hand-labelled set in data/guard_*.jsonl."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from hymt.errors import InvalidInputError
from hymt.languages import Language, get_language
from hymt.translate.detect import LanguageDetector
from hymt.translate.quality import (
    SEVERITY,
    QualityIssue,
    Severity,
    VerbatimReason,
    Verdict,
    assess_translation,
    check_translation,
    is_repetitive,
    wrong_script,
)

EN, ZH, JA, RU, DE = (get_language(c) for c in ("en", "zh", "ja", "ru", "de"))
DATA = Path(__file__).parent / "data"
MAX_FALSE_POSITIVE_RATE = 0.05
MAX_FALSE_NEGATIVE_RATE = 0.20


@pytest.fixture(scope="module")
def detector():
    return LanguageDetector()


def test_good_translations_pass():
    assert check_translation("今天天气真好。", "The weather is nice today.", target=EN, source_lang=ZH) == ()
    assert check_translation("Hello, world.", "你好，世界。", target=ZH, source_lang=EN) == ()
    assert check_translation("Good morning.", "おはようございます。", target=JA) == ()
    assert check_translation("Good morning, my friend.", "Доброе утро, мой друг.", target=RU) == ()
    assert check_translation("iPhone", "iPhone", target=ZH, source_lang=EN) == ()  # too short to judge


def test_empty_and_echo():
    assert check_translation("Hello there.", "  ", target=DE) == ("empty",)
    assert check_translation("Hello there, friend.", "hello  there, friend.", target=DE, source_lang=EN) == ("echo",)
    assert check_translation("Hello there, friend.", "Hello there, friend.", target=EN, source_lang=EN) == ()
    assert check_translation("Coca Cola", "Coca Cola", target=DE, source_lang=EN) == ()  # a name
    assert "echo" in check_translation("今天天气好", "今天天气好", target=EN, source_lang=ZH)


def test_wrong_script():
    assert wrong_script("这是中文的句子，不是英文。", EN)
    assert wrong_script("Dies ist 中文中文中文中文 gemischt", DE)  # > 30 % Han
    assert not wrong_script("Das ist das Wort 中 im Satz.", DE)
    assert wrong_script("This is an English sentence instead.", ZH)
    assert wrong_script("这是中文的句子而不是日语的句子", JA)  # Chinese-only characters for Japanese
    assert wrong_script("これは日本語の文です", ZH)  # kana for Chinese
    assert wrong_script("This is not Russian at all, sorry.", RU)
    assert not wrong_script("Это iPhone 15 Pro.", RU)


def test_repetition():
    assert is_repetitive("Hello.", "Bonjour bonjour bonjour bonjour bonjour bonjour")
    assert is_repetitive("Long text.", "我们走吧，我们走吧，我们走吧，我们走吧，我们走吧，我们走吧")
    assert not is_repetitive("ha ha ha ha ha ha", "ha ha ha ha ha ha")  # the source repeats too
    assert not is_repetitive("A normal sentence.", "Une phrase normale, sans boucle, qui se termine ici.")
    loop = " ".join(["the cat sat on", "the mat and", "the cat sat on", "the mat and"] * 6)
    assert "repetition" in check_translation("Die Katze.", loop, target=EN)


@pytest.mark.parametrize("output", [
    "Intro: abc abc  abc\tabc\nabc abc end",  # irregular whitespace between the repeats
    "x" * 3 + "lalalalalalalalalala" + "y",  # a 2-character unit
    "Start " + "a long repeated phrase of words, " * 5,  # a unit of 33 characters
    "前言" + "天天向上" * 5,
])
def test_loops_are_found_whatever_the_unit_and_the_spacing(output):
    assert is_repetitive("Short source.", output)


def test_unit_longer_than_the_limit_is_not_a_loop():
    unit = "an unusually long phrase that goes on past forty characters, "  # 61 characters
    assert not is_repetitive("Short source.", unit * 5)


def test_length_limit_is_an_issue():
    assert check_translation("Hi there.", "Salut là.", target=DE, finish_reason="length") == ("length",)


# -- answers that are right as they are ---------------------------------------------------


@pytest.mark.parametrize("text,target,reason", [
    ("Microsoft Visual Studio Code", "de", VerbatimReason.NAME),
    ("Samsung Galaxy S24 Ultra", "zh", VerbatimReason.NAME),
    ("iPhone 15 Pro Max", "th", VerbatimReason.NAME),
    ("Ludwig van Beethoven", "fr", VerbatimReason.NAME),
    ("1600 Amphitheatre Parkway, Mountain View, CA 94043", "de", VerbatimReason.NAME),
    ('git commit -m "Fix typo in README"', "zh", VerbatimReason.CODE),
    ("docker run -it --rm ubuntu bash", "ru", VerbatimReason.CODE),
    ("SELECT name, email FROM users WHERE active = 1;", "es", VerbatimReason.CODE),
    ("https://example.com/docs/getting-started", "ja", VerbatimReason.CODE),
    ("/etc/nginx/sites-available/default", "zh", VerbatimReason.CODE),
    ("+49 30 1234 5678", "fr", VerbatimReason.NO_LETTERS),
])
def test_names_products_code_and_numbers_kept_verbatim_pass(text, target, reason):
    assert check_translation(text, text, target=get_language(target), source_lang=EN) == ()
    verdict = assess_translation(text, text, target=get_language(target), source_lang=EN)
    assert verdict.verbatim == reason and verdict.verbatim_ok and verdict.passed and not verdict.hard


def test_a_command_is_verbatim_when_the_detector_finds_no_language(detector):
    verdict = assess_translation("pip install hymt", "pip install hymt", target=DE, source_lang=EN, detector=detector)
    assert verdict.verbatim == VerbatimReason.CODE
    # The same form in words the detector reads as English is an untranslated phrase.
    phrase = assess_translation("see you tomorrow", "see you tomorrow", target=DE, source_lang=EN, detector=detector)
    assert phrase.issues == (QualityIssue.ECHO, QualityIssue.WRONG_LANGUAGE)


@pytest.mark.parametrize("text,source,target", [
    ("Terima kasih banyak atas bantuannya.", "id", "ms"),
    ("Selamat pagi semua.", "ms", "id"),
])
def test_identical_indonesian_and_malay_pass(text, source, target):
    assert check_translation(text, text, target=get_language(target), source_lang=get_language(source)) == ()
    verdict = assess_translation(text, text, target=get_language(target), source_lang=get_language(source))
    assert verdict.verbatim == VerbatimReason.SAME_LANGUAGE


@pytest.mark.parametrize("answer", ["東京大学大学院情報理工学系研究科", "国立国会図書館東京本館", "東京都庁第一本庁舎"])
def test_japanese_in_kanji_only_passes(answer):
    assert not wrong_script(answer, JA)
    assert check_translation("An institution.", answer, target=JA, source_lang=EN) == ()


def test_chinese_for_japanese_is_still_caught_by_its_characters():
    assert check_translation("This is hard.", "这个问题很难解决。", target=JA, source_lang=EN) == ("wrong_script",)


@pytest.mark.parametrize("source,answer,target", [
    ("加油！加油！加油！加油！加油！", "Go! Go! Go! Go! Go!", EN),
    ("加油！加油！加油！加油！加油！", "頑張れ！頑張れ！頑張れ！頑張れ！頑張れ！", JA),
    ("No, no, no, no, no, no!", "Nein, nein, nein, nein, nein, nein!", DE),
])
def test_repeating_what_the_source_repeats_passes(source, answer, target):
    assert check_translation(source, answer, target=target) == ()


def test_repeating_far_more_than_the_source_is_a_loop():
    assert is_repetitive("加油！加油！加油！", "Go! " * 12)
    assert is_repetitive("加油！加油！", "Go! " * 5)


def test_an_answer_already_in_the_target_language_passes(detector):
    text = "Vielen Dank für Ihre schnelle Antwort und die ausführlichen Informationen."
    verdict = assess_translation(text, text, target=DE, source_lang=EN, detector=detector)
    assert verdict.verbatim == VerbatimReason.TARGET_LANGUAGE and verdict.passed


# -- wrong answers ------------------------------------------------------------------------


@pytest.mark.parametrize("answer,target", [
    ("Le musée est fermé le lundi et les jours fériés.", "de"),
    ("Отчёт должен быть готов к концу недели.", "uk"),
    ("میں دو راتوں کے لیے ایک کمرہ بک کرنا چاہتا ہوں۔", "fa"),
    ("बैठक गुरुवार दोपहर तक स्थगित कर दी गई है।", "mr"),
    ("图书馆早上九点开门，晚上六点关门。", "zh-Hant"),
])
def test_wrong_language_in_the_right_script_is_caught(detector, answer, target):
    verdict = assess_translation("A sentence.", answer, target=get_language(target), source_lang=EN, detector=detector)
    assert verdict.issues == (QualityIssue.WRONG_LANGUAGE,) and verdict.hard
    # Without the detector only scripts are checked: the same answer passes.
    assert assess_translation("A sentence.", answer, target=get_language(target), source_lang=EN).passed


def test_lao_for_thai_is_a_wrong_script_even_without_the_detector():
    verdict = assess_translation("Thank you very much for your help.", "ຂອບໃຈຫຼາຍໆສຳລັບການຊ່ວຍເຫຼືອຂອງເຈົ້າ",
                                 target=get_language("th"), source_lang=EN)
    assert verdict.issues == (QualityIssue.WRONG_SCRIPT,)


def test_a_short_answer_is_never_flagged_on_the_detectors_word_alone(detector):
    assert detector.detect("Je suis fatigué.").language.code == "fr"
    assert assess_translation("I am tired.", "Je suis fatigué.", target=DE, source_lang=EN, detector=detector).passed


def test_an_untranslated_sentence_is_a_hard_echo(detector):
    text = "Good morning, my friend, how are you today?"
    verdict = assess_translation(text, text, target=DE, source_lang=EN, detector=detector)
    assert verdict.issues == (QualityIssue.ECHO, QualityIssue.WRONG_LANGUAGE) and verdict.hard
    # Without the detector nothing proves it wrong: a soft echo.
    soft = assess_translation(text, text, target=DE, source_lang=EN)
    assert soft.issues == (QualityIssue.ECHO,) and not soft.hard and not soft.passed


def test_issues_come_in_a_fixed_order_and_verbatim_yields_to_a_cut():
    text = "Microsoft Visual Studio Code"
    verdict = assess_translation(text, text, target=DE, source_lang=EN, finish_reason="length")
    assert verdict.issues == (QualityIssue.LENGTH,) and not verdict.verbatim_ok


# -- the verdict type ---------------------------------------------------------------------


def test_every_issue_has_a_severity_and_only_echo_is_soft():
    assert set(SEVERITY) == set(QualityIssue)
    assert {i for i, s in SEVERITY.items() if s is Severity.SOFT} == {QualityIssue.ECHO}


def test_verdict_validates_its_fields():
    with pytest.raises(InvalidInputError) as err:
        Verdict(("echo",))
    assert err.value.field == "issues" and "wrong_language" in str(err.value)
    with pytest.raises(InvalidInputError) as err:
        Verdict((QualityIssue.ECHO,), verbatim=VerbatimReason.NAME)
    assert err.value.field == "verbatim"
    assert Verdict((QualityIssue.ECHO,)).hard is False and Verdict((QualityIssue.LENGTH,)).hard is True


# -- the labelled set ---------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledAnswer:
    """One hand-labelled (source, answer, target) case of data/guard_*.jsonl."""

    kind: str
    source: str
    answer: str
    target: Language
    source_lang: Language | None
    finish_reason: str | None
    right: bool


def load_labelled(name: str, right: bool) -> list[LabelledAnswer]:
    rows = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows.append(LabelledAnswer(
            row["kind"], row["source"], row["answer"], get_language(row["target"]),
            get_language(row["source_lang"]) if row.get("source_lang") else None, row.get("finish_reason"), right,
        ))
    return rows


def judge(detector: LanguageDetector, case: LabelledAnswer) -> Verdict:
    return assess_translation(case.source, case.answer, target=case.target, source_lang=case.source_lang,
                              finish_reason=case.finish_reason, detector=detector)


def test_labelled_set_is_large_and_varied():
    right, wrong = load_labelled("guard_correct.jsonl", True), load_labelled("guard_wrong.jsonl", False)
    assert len(right) >= 60 and len(wrong) >= 30
    assert len({c.target.code for c in right + wrong}) >= 30
    assert {"verbatim", "close_language", "kanji_only", "repeated_source", "target_language"} <= {c.kind for c in right}
    assert {"wrong_language", "wrong_script", "echo", "truncation", "loop", "empty"} <= {c.kind for c in wrong}


def test_guard_rates_on_the_labelled_set(detector):
    right, wrong = load_labelled("guard_correct.jsonl", True), load_labelled("guard_wrong.jsonl", False)
    false_positives = [c for c in right if not judge(detector, c).passed]
    false_negatives = [c for c in wrong if judge(detector, c).passed]
    soft_only = [c for c in wrong if not judge(detector, c).passed and not judge(detector, c).hard]
    print(f"\nguard: {len(false_positives)}/{len(right)} right answers flagged, "
          f"{len(false_negatives)}/{len(wrong)} wrong answers passed, {len(soft_only)} caught only as soft")
    for case in false_positives + false_negatives:
        print(f"  {'flagged' if case.right else 'passed'}: {case.kind} -> {case.target.code}: {case.answer[:60]}")
    assert len(false_positives) <= MAX_FALSE_POSITIVE_RATE * len(right)
    assert len(false_negatives) <= MAX_FALSE_NEGATIVE_RATE * len(wrong)
