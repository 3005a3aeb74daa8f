"""split_sentences / split_to_budget directly, and randomized round-trip checks.

tests/translate/test_sentence_benchmark.py measures the sentence rules on a labelled set; the
tests here pin single behaviours and the cutting of text over the token budget."""
from __future__ import annotations

import random
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hymt.documents.inline_tags import parse_tree
from hymt.errors import UnknownLanguageError
from hymt.languages import get_language
from hymt.translate.graphemes import grapheme_breaks
from hymt.translate.segmentation import unit_pieces
from hymt.translate.segmenter import approx_tokens, split_sentences, split_to_budget
from hymt.translate.text_formats import text_format


def _join(pairs):
    return "".join(p + s for p, s in pairs)


def test_sentences_and_separators():
    text = "Hello world! How are you?  I am fine.\nThanks."
    pairs = split_sentences(text)
    assert pairs == [("Hello world!", " "), ("How are you?", "  "), ("I am fine.", "\n"), ("Thanks.", "")]


@pytest.mark.parametrize("text", [
    "Prof. Dr. Müller kommt z.B. am Montag.",
    "The value is 3.14159 and e.g. more.",
    "See Fig. 3 for details.",
    "He said \"Stop.\" and left.",
    "Wait... what happened?",
])
def test_no_split(text):
    assert split_sentences(text) == [(text, "")]


def test_quotes_after_end_punctuation_stay():
    assert split_sentences('He said "Go!" Then he left.') == [('He said "Go!"', " "), ("Then he left.", "")]
    # A quote introduced by a colon ends its sentence: 他说：“走吧。” / 然后离开了。 (the old
    # splitter kept these together; the closing quote is no reason to run on).
    assert split_sentences("他说：“走吧。”然后离开了。") == [("他说：“走吧。”", ""), ("然后离开了。", "")]
    assert split_sentences("“走吧。”他说。") == [("“走吧。”他说。", "")]
    assert split_sentences("真的吗？」我们走吧。") == [("真的吗？」我们走吧。", "")]
    assert split_sentences("真的吗？」 我们走吧。") == [("真的吗？」", " "), ("我们走吧。", "")]


def test_short_fragments_join_the_next_sentence():
    assert split_sentences("A. The first option is good.") == [("A. The first option is good.", "")]


def test_budget_split_prefers_clauses_then_spaces():
    text = "one two three, four five six, seven eight nine"
    pieces = split_to_budget(text, 6, count=lambda s: len(s.split()) * 2)
    assert _join(pieces) == text
    assert pieces[0] == ("one two three,", " ")
    words = "alpha beta gamma delta epsilon zeta eta theta"
    pieces = split_to_budget(words, 3, count=lambda s: len(s.split()))
    assert _join(pieces) == words and all(len(p.split()) <= 3 for p, _ in pieces)


_ALPHABET = list("abc XYZ.,!?;:\n\n\t  -#*>|`~<>/=\"'()1234") + list("。！？「」“”，中文字ไทย។။") + [
    "```", "\n\n", " --> ", "<b>", "</p>", "&amp;", "\r\n"]


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_random_documents_roundtrip(fmt):
    """Random documents: every unit's segments rebuild the unit, and the document rendered
    from its own units is the input."""
    rng = random.Random(fmt)
    for _ in range(300):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 80)))
        document = text_format(fmt).parse(text.encode("utf-8"))
        for unit in document.units:
            pieces = unit_pieces(unit, budget=8, count=approx_tokens)
            assert "".join(p.text + p.separator for p in pieces) == unit.text, repr(unit.text)
            assert all(p.text == "" or p.text.strip() for p in pieces)
        assert document.render([parse_tree(u.text) for u in document.units]).decode("utf-8") == text


def _sentences(text, language=None):
    pairs = split_sentences(text, language)
    assert _join(pairs) == text
    return [p for p, _ in pairs]


@pytest.mark.parametrize("text, language, expected", [
    ('"Really?" she asked. He nodded.', "en", ['"Really?" she asked.', "He nodded."]),
    ("« Tu viens ? » demanda-t-elle. Il haussa les épaules.", "fr",
     ["« Tu viens ? » demanda-t-elle.", "Il haussa les épaules."]),
    ("Il cria : « Attention ! » Le camion s'arrêta.", "fr", ["Il cria : « Attention ! »", "Le camion s'arrêta."]),
    ("Obst, z. B. Äpfel, wächst hier. Die Ernte beginnt bald.", "de",
     ["Obst, z. B. Äpfel, wächst hier.", "Die Ernte beginnt bald."]),
    ("Das war am 3. Oktober 1990. Seitdem ist Feiertag.", "de",
     ["Das war am 3. Oktober 1990.", "Seitdem ist Feiertag."]),
    ("Das älteste ist 12. Es geht aufs Gymnasium.", "de", ["Das älteste ist 12.", "Es geht aufs Gymnasium."]),
    ("Il Sig. Rossi è arrivato. La Sig.ra Bianchi no.", "it", ["Il Sig. Rossi è arrivato.", "La Sig.ra Bianchi no."]),
    ("Музей на ул. Пушкина, д. 10. Вход свободный.", "ru", ["Музей на ул. Пушкина, д. 10.", "Вход свободный."]),
    ("Встреча в 10 ч. Не опаздывайте!", "ru", ["Встреча в 10 ч.", "Не опаздывайте!"]),
    ("التقى د. أحمد بالطلاب. هل حضرت؟ كانت مفيدة!", "ar", ["التقى د. أحمد بالطلاب.", "هل حضرت؟", "كانت مفيدة!"]),
    ("डॉ. शर्मा नहीं आए। क्या आप आएँगे?", "hi", ["डॉ. शर्मा नहीं आए।", "क्या आप आएँगे?"]),
    ("मैं ठीक हूँ. तुम कैसे हो?", "hi", ["मैं ठीक हूँ.", "तुम कैसे हो?"]),
    ("「本当に行くの？」と彼女は聞いた。彼はうなずいた。", "ja",
     ["「本当に行くの？」と彼女は聞いた。", "彼はうなずいた。"]),
    ("「行ってきます！」娘は家を出た。", "ja", ["「行ってきます！」", "娘は家を出た。"]),
    ("老师问：“谁知道？”没有人回答。", "zh", ["老师问：“谁知道？”", "没有人回答。"]),
    ("你吃饭了吗?我刚吃完。", "zh", ["你吃饭了吗?", "我刚吃完。"]),
    ("重さは１．５キロです。軽い。", "ja", ["重さは１．５キロです。", "軽い。"]),
    ("¿Vienes? ¡Claro que sí! Llevaré pan.", "es", ["¿Vienes?", "¡Claro que sí!", "Llevaré pan."]),
    ("—¿Y tú quién eres? —preguntó el niño. —Soy tu vecino.", "es",
     ["—¿Y tú quién eres? —preguntó el niño.", "—Soy tu vecino."]),
    ("Het was laat. 's Avonds aten we samen.", "nl", ["Het was laat.", "'s Avonds aten we samen."]),
    ("Բարև ձեզ։ Ինչպե՞ս եք։", None, ["Բարև ձեզ։", "Ինչպե՞ս եք։"]),
    ("Τι ώρα είναι; Είναι οκτώ. Ο κ. Νίκος ήρθε· κανείς δεν ήξερε.", None,
     ["Τι ώρα είναι;", "Είναι οκτώ.", "Ο κ. Νίκος ήρθε· κανείς δεν ήξερε."]),
    ("བཀྲ་ཤིས་བདེ་ལེགས། ང་ལྷ་སར་ཕྱིན་ཏེ། ཇོ་ཁང་ལ་མཇལ་ཁ་ཞུས་པ་ཡིན།", "bo",
     ["བཀྲ་ཤིས་བདེ་ལེགས།", "ང་ལྷ་སར་ཕྱིན་ཏེ། ཇོ་ཁང་ལ་མཇལ་ཁ་ཞུས་པ་ཡིན།"]),
    ("ខ្ញុំទៅផ្សារ។ខ្ញុំបានទិញត្រី និងបន្លែ។", "km", ["ខ្ញុំទៅផ្សារ។", "ខ្ញុំបានទិញត្រី និងបន្លែ។"]),
    ("ကျွန်တော် ဈေးကို သွားပြီး၊ ငါး ဝယ်ခဲ့တယ်။ ညနေ ထမင်းချက်မယ်။", "my",
     ["ကျွန်တော် ဈေးကို သွားပြီး၊ ငါး ဝယ်ခဲ့တယ်။", "ညနေ ထမင်းချက်မယ်။"]),
    ("Download it from https://example.org/v2.1/setup.exe. Then write to a.b@example.org. Thanks.", "en",
     ["Download it from https://example.org/v2.1/setup.exe.", "Then write to a.b@example.org.", "Thanks."]),
    ("To reset it: 1. Unplug it. 2. Wait. 3. Plug it back in.", "en",
     ["To reset it: 1. Unplug it.", "2. Wait.", "3. Plug it back in."]),
    ('She read it: "The meeting is off. Go home." Nobody moved.', "en",
     ['She read it: "The meeting is off. Go home."', "Nobody moved."]),
    ("I waited... Nobody came. Maybe… or maybe not.", "en", ["I waited...", "Nobody came.", "Maybe… or maybe not."]),
])
def test_known_cases(text, language, expected):
    assert _sentences(text, language) == expected


@pytest.mark.parametrize("text", [
    "เด็ก ๆ ชอบเล่นที่สนามหลังโรงเรียนทุกวัน ครูจึงต้องคอยดูแลอย่างใกล้ชิด",  # จึง: one sentence
    "ผลไม้ที่ขายดีในฤดูร้อน ได้แก่ มะม่วง ทุเรียน และมังคุด",  # a list: short clauses stay
    "ร้านนี้ปิดเร็วกว่าปกติ เพราะเจ้าของต้องไปงานแต่งงานที่ต่างจังหวัด",  # เพราะ: "because"
])
def test_thai_clause_spaces_do_not_split(text):
    assert _sentences(text, "th") == [text]


def test_thai_sentence_spaces_split():
    assert _sentences("สวัสดีครับ วันนี้ผมจะพาทุกท่านไปชมวัดพระแก้ว", "th") == [
        "สวัสดีครับ", "วันนี้ผมจะพาทุกท่านไปชมวัดพระแก้ว"]  # after a polite particle
    assert _sentences("ผมไปโรงเรียนทุกวัน วันนี้ฝนตกหนักมาก ผมจึงไปสาย") == [
        "ผมไปโรงเรียนทุกวัน", "วันนี้ฝนตกหนักมาก ผมจึงไปสาย"]  # two long clauses; จึง continues
    assert _sentences("การประชุมจะเริ่มเวลา 09.00 น. ที่ห้องประชุมใหญ่") == [
        "การประชุมจะเริ่มเวลา 09.00 น. ที่ห้องประชุมใหญ่"]  # Thai dots abbreviate


def test_language_chooses_abbreviations():
    # Spanish "ir" (to go) ends the sentence; Dutch "ir." (engineer) is a title.
    assert _sentences("Quiero ir. Mañana vuelvo.", "es") == ["Quiero ir.", "Mañana vuelvo."]
    assert _sentences("Ik sprak met ir. Jansen.", "nl") == ["Ik sprak met ir. Jansen."]
    # Ordinals: German writes "12. Jahrhundert", English does not.
    assert _sentences("Sie entstand im 12. Jahrhundert.", get_language("de")) == ["Sie entstand im 12. Jahrhundert."]
    assert _sentences("We counted to 12. Then we stopped.", "en") == ["We counted to 12.", "Then we stopped."]
    # Without a language: a month or ordinal noun after the number, and every title table.
    assert _sentences("Sie entstand im 12. Jahrhundert.") == ["Sie entstand im 12. Jahrhundert."]
    assert _sentences("He finished No. 3. His coach said no. The team cheered.") == [
        "He finished No. 3.", "His coach said no.", "The team cheered."]


def test_unknown_language_is_an_error():
    with pytest.raises(UnknownLanguageError) as info:
        split_sentences("Hello.", "xx")
    assert info.value.field == "language" and "supported codes" in str(info.value)


# --- cutting text over the budget -----------------------------------------------------------

_THAI_LEADING = set("เแโใไ")
_THAI_FOLLOWING = set("ะาำๅ")


def _cuts(pieces):
    """Offsets where consecutive pieces meet (no separator between them)."""
    offsets, at = [], 0
    for piece, sep in pieces[:-1]:
        at += len(piece)
        if not sep:
            offsets.append(at)
        at += len(sep)
    return offsets


def _one_cluster(piece):
    """Whether `piece` cannot be cut at all (one cluster, with any marks after it)."""
    return grapheme_breaks(piece) == [len(piece)]


def _assert_whole_graphemes(text, pieces):
    assert _join(pieces) == text
    clusters = set(grapheme_breaks(text))
    for cut in _cuts(pieces):
        assert cut in clusters, (text[:cut], text[cut:])
        assert not unicodedata.category(text[cut]).startswith("M")


def test_thai_cut_prefers_spaces_then_syllables():
    text = "ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน กรุงเทพมหานครเป็นเมืองหลวงและเมืองที่ใหญ่ที่สุด"
    pieces = split_to_budget(text, 40, count=len)
    assert pieces[0] == ("ประเทศไทยมีประชากรประมาณเจ็ดสิบล้านคน", " ")  # the space first
    _assert_whole_graphemes(text, pieces)
    for cut in _cuts(pieces):
        assert text[cut - 1] not in _THAI_LEADING and text[cut] not in _THAI_FOLLOWING, (text[:cut], text[cut:])
    assert all(len(p) <= 40 for p, _ in pieces)


@pytest.mark.parametrize("text, script", [
    ("เกี่ยวกับเรื่องนี้ไม่ได้เป็นไปตามที่เขาได้คาดเอาไว้แต่แรกเลยแม้แต่น้อย", "thai"),
    ("ສະບາຍດີເຈົ້າໄປໃສມາແລ້ວມື້ນີ້ອາກາດດີຫຼາຍເນາະ", "lao"),
    ("ကျွန်တော်မင်္ဂလာပါနေကောင်းလားရန်ကုန်မြို့မှာနေပါတယ်", "myanmar"),
    ("ខ្ញុំស្រលាញ់ប្រទេសកម្ពុជាណាស់ព្រោះវាស្អាតហើយមនុស្សល្អ", "khmer"),
    ("བཀྲ་ཤིས་བདེ་ལེགས་ཁྱེད་རང་སྐུ་གཟུགས་བདེ་པོ་ཡིན་པས་ང་བདེ་པོ་ཡིན", "tibetan"),
])
@pytest.mark.parametrize("budget", [8, 13, 21])
def test_scripts_without_spaces_cut_between_syllables(text, script, budget):
    """Budgets that hold any one syllable: every cut falls between syllables."""
    pieces = split_to_budget(text, budget, count=len)
    _assert_whole_graphemes(text, pieces)
    for cut in _cuts(pieces):
        before, after = text[cut - 1], text[cut]
        following = text[cut + 1 : cut + 2]
        if script in ("thai", "lao"):
            assert before not in "เแโใไເແໂໃໄ" and after not in "ะาำๅະາຳ"
        elif script == "myanmar":
            assert before != "\u1039" and following not in ("\u103a", "\u1039")  # virama; asat or stack after
        elif script == "khmer":
            assert before != "\u17d2" and following != "\u17cb"  # coeng; bantoc after
        else:
            assert before == "\u0f0b"  # after a tsheg
    assert all(len(p) <= budget for p, _ in pieces)


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_budgets_below_a_syllable_still_cut_between_graphemes(budget):
    text = "เกี่ยวกับกรุงเทพฯ ကျွန်တော် ខ្ញុំស្រលាញ់ བཀྲ་ཤིས"
    pieces = split_to_budget(text, budget, count=len)
    _assert_whole_graphemes(text, pieces)
    assert all(len(p) <= budget or _one_cluster(p) for p, _ in pieces)


def test_one_cluster_over_the_budget_stays_whole():
    text = "ཀྲཱྀཾ" + "ཀ"  # a stacked Tibetan cluster of five code points, then one letter
    pieces = split_to_budget(text, 2, count=len)
    assert pieces == [("ཀྲཱྀཾ", ""), ("ཀ", "")]


# --- every input comes back whole ---------------------------------------------------------------

_SPECIAL = list(".!?…;,:。！？．।؟۔។៕။།։\"'“”„«»「」（）()¿¡—- \u00a0\u202f\n\t") + [
    "Mr", "Dr", "z", "B", "3", "12", "Oktober", "ул", "д", "د", "डॉ", "हूँ", "ครับ", "เพราะ", "ไทย", "ๆ",
    "ཏེ", "་", "ខ្ញុំ", "ကျွန်", "中文", "と", "は", "'s", "www.a.com", "a@b.de", "е", "Γεια",
]
_LANGUAGES = [None, "en", "de", "fr", "ja", "zh", "th", "bo", "hi", "pl", "tr"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_SPECIAL), max_size=40), st.sampled_from(_LANGUAGES))
def test_sentences_concatenate_to_the_input(parts, language):
    text = "".join(parts).strip()
    pairs = split_sentences(text, language)
    assert _join(pairs) == text
    assert all(p == p.strip() for p, _ in pairs) and all(not s.strip() for _, s in pairs)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.sampled_from(_LANGUAGES))
def test_any_text_concatenates_to_the_input(text, language):
    text = text.strip()
    assert _join(split_sentences(text, language)) == text


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=60), st.integers(min_value=1, max_value=12))
def test_budget_pieces_concatenate_to_the_input(text, budget):
    pieces = split_to_budget(text, budget, count=len)
    assert _join(pieces) == text
    assert all(len(p) <= budget or _one_cluster(p) for p, _ in pieces if p.strip())


def test_approx_tokens_counts_bytes():
    assert approx_tokens("abc") == 1 and approx_tokens("中文") == 2 and approx_tokens("") == 1
