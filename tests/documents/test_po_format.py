"""gettext PO/POT: which entries are sent, plural forms for the target language, context,
flags and placeholders; files built and read back with polib."""
from __future__ import annotations

import polib
import pytest

from hymt.documents import po_format
from hymt.documents.inline_tags import parse_tree
from hymt.errors import InvalidDocumentError


def build_catalogue(language: str = "", plural_forms: str = "nplurals=INTEGER; plural=EXPRESSION;") -> bytes:
    catalogue = polib.POFile()
    catalogue.metadata = {"Project-Id-Version": "app 1.0", "Language": language,
                          "Content-Type": "text/plain; charset=UTF-8", "Plural-Forms": plural_forms}
    catalogue.append(polib.POEntry(msgid="Hello %(name)s, welcome back!", flags=["python-format"],
                                   occurrences=[("app.py", "10")]))
    catalogue.append(polib.POEntry(msgid="%d file deleted", msgid_plural="%d files deleted", flags=["c-format"],
                                   msgstr_plural={0: "", 1: ""}))
    catalogue.append(polib.POEntry(msgctxt="menu", msgid="Open"))
    catalogue.append(polib.POEntry(msgid="Already translated", msgstr="Schon übersetzt"))
    catalogue.append(polib.POEntry(msgid="New wording\n", msgstr="Alter Wortlaut\n", flags=["fuzzy"],
                                   previous_msgid="Old wording\n"))
    catalogue.append(polib.POEntry(msgid="Growth of 5%d", flags=["no-c-format"]))
    catalogue.append(polib.POEntry(msgid="{count, plural, one {# item} other {# items}} in <b>cart</b>"))
    catalogue.append(polib.POEntry(msgid="%s"))
    catalogue.append(polib.POEntry(msgid="Removed", msgstr="Entfernt", obsolete=True))
    return str(catalogue).encode("utf-8")


@pytest.fixture(scope="module")
def source() -> bytes:
    return build_catalogue()


def test_units_are_untranslated_and_fuzzy_messages(source):
    units = po_format.parse(source).units
    assert [(u.text, u.context) for u in units] == [
        ("Hello <s1/>, welcome back!", ""),
        ("<s1/> file deleted", ""),
        ("<s1/> files deleted", ""),
        ("Open", "menu"),
        ("New wording", ""),
        ("Growth of 5%d", ""),
        ("<s1><s2><s3/> item</s2><s4><s5/> items</s4></s1> in <s6>cart</s6>", ""),
    ]
    assert not any(u.split for u in units)


def _entries(data: bytes) -> dict[tuple[str, str], polib.POEntry]:
    catalogue = polib.pofile(data.decode("utf-8"))
    return {(e.msgctxt or "", e.msgid): e for e in [*catalogue, *catalogue.obsolete_entries()]}


def test_marked_translation_fills_targets_and_keeps_the_rest(source, marked):
    out = marked(po_format.parse(source), target_language="de")
    entries = _entries(out)
    assert entries[("", "Hello %(name)s, welcome back!")].msgstr == "«Hello »%(name)s«, welcome back!»"
    assert entries[("", "Hello %(name)s, welcome back!")].occurrences == [("app.py", "10")]
    assert entries[("", "%d file deleted")].msgstr_plural == {0: "%d« file deleted»", 1: "%d« files deleted»"}
    assert entries[("menu", "Open")].msgstr == "«Open»"
    assert entries[("", "Already translated")].msgstr == "Schon übersetzt"
    fuzzy = entries[("", "New wording\n")]
    assert fuzzy.msgstr == "«New wording»\n" and "fuzzy" in fuzzy.flags and fuzzy.previous_msgid == "Old wording\n"
    assert entries[("", "Growth of 5%d")].msgstr == "«Growth of 5%d»"
    assert entries[("", "{count, plural, one {# item} other {# items}} in <b>cart</b>")].msgstr == \
        "{count, plural, one {#« item»} other {#« items»}}« in »<b>«cart»</b>"
    assert entries[("", "%s")].msgstr == ""
    assert entries[("", "Removed")].obsolete and entries[("", "Removed")].msgstr == "Entfernt"
    metadata = polib.pofile(out.decode("utf-8")).metadata
    assert metadata["Language"] == "de" and metadata["Plural-Forms"] == "nplurals=2; plural=(n != 1);"
    assert metadata["Project-Id-Version"] == "app 1.0"


@pytest.mark.parametrize("language, forms", [
    ("ja", {0: "P"}),
    ("ar", {0: "P", 1: "S", 2: "P", 3: "P", 4: "P", 5: "P"}),
    ("ru", {0: "S", 1: "P", 2: "P"}),
    ("zh-Hant", {0: "P"}),
])
def test_plural_forms_follow_the_target_language(source, language, forms):
    document = po_format.parse(source)
    trees = [("S",) if unit.text == "<s1/> file deleted" else ("P",) if unit.text == "<s1/> files deleted"
             else parse_tree(unit.text) for unit in document.units]
    out = document.render_for(trees, language)
    catalogue = polib.pofile(out.decode("utf-8"))
    assert catalogue.find("%d file deleted").msgstr_plural == forms
    nplurals = catalogue.metadata["Plural-Forms"].split(";")[0]
    assert nplurals == f"nplurals={len(forms)}"
    assert catalogue.metadata["Language"] == language.replace("-", "_")


def test_a_file_already_for_the_target_keeps_its_plural_forms():
    own = "nplurals=2; plural=(n > 1);"
    document = po_format.parse(build_catalogue("fr", own))
    catalogue = polib.pofile(document.render_for([parse_tree(u.text) for u in document.units], "fr").decode())
    assert catalogue.metadata["Plural-Forms"] == own
    assert sorted(catalogue.find("%d file deleted").msgstr_plural) == [0, 1]


def test_identity_translation_gives_back_the_messages(source, identity):
    out = identity(po_format.parse(source))
    for (_, msgid), entry in _entries(out).items():
        if entry.msgid_plural:
            assert entry.msgstr_plural == {0: msgid, 1: entry.msgid_plural}
        elif msgid not in ("Already translated", "%s", "Removed"):
            assert entry.msgstr == msgid, msgid


@pytest.mark.parametrize("data", [b"hello world\n", b'msgid "a"\nmsgstr "b"\nnonsense\n', b"", b"\xff\xfe\x00"])
def test_a_broken_file_is_refused(data):
    with pytest.raises(InvalidDocumentError, match="^po: "):
        po_format.parse(data)
