"""Abbreviations and ordinal cues per language: the data behind "does this '.' end a sentence?".

Each table entry is the word before the dot, lower-cased, without the dot. Three kinds:
- `titles` never end a sentence in practice: a name or noun follows (Dr., Sig., ул., z.B.).
- `before_number` are abbreviations only when a number follows (No. 5, pag. 12, д. 10);
  otherwise the word may be an ordinary one ending a sentence ("he said no.").
- `may_end` are dotted forms that often close a sentence although they look like an
  abbreviation ("и т. д.", "5 p.m."): a capital after them starts a new sentence.
Abbreviations that end sentences as often as not (etc., usw., ecc., dll.) are in no table: the
case of the next word decides (a lower-case word continues the sentence).
Single letters ("J.", "д.", "د.", "पु.") are initials or one-letter abbreviations everywhere;
the splitter handles them without a table, except the one-letter words of `NOT_INITIALS`.

Without a known language the splitter uses the union of every language's table, less the
entries in `_NOT_IN_UNION` that are ordinary words in another language ("on", "me", "ir").
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from hymt.languages import Language


@dataclass(frozen=True)
class Abbreviations:
    titles: frozenset[str] = frozenset()
    before_number: frozenset[str] = frozenset()
    may_end: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()  # word endings that mark an abbreviation (German "Hauptstr.")

    def __or__(self, other: Abbreviations) -> Abbreviations:
        return Abbreviations(
            self.titles | other.titles,
            self.before_number | other.before_number,
            self.may_end + tuple(form for form in other.may_end if form not in self.may_end),
            self.suffixes + tuple(s for s in other.suffixes if s not in self.suffixes),
        )


def _table(titles: str = "", before_number: str = "", may_end: str = "", suffixes: str = "") -> Abbreviations:
    return Abbreviations(
        frozenset(titles.split()),
        frozenset(before_number.split()),
        tuple(form.strip() for form in may_end.split(",") if form.strip()),  # forms hold spaces
        tuple(suffixes.split()),
    )


_MONTHS_EN = "jan feb mar apr jun jul aug sep sept oct nov dec"
# Letter names written in Devanagari, used as initials ("आर. के. नारायण" = R. K. Narayan).
_DEVANAGARI_LETTERS = "ए बी सी डी ई एफ जी एच आई जे एल एम एन ओ पी क्यू आर एस टी यू वी डब्ल्यू एक्स वाई जेड ज़ेड"

# For languages written with Latin letters and for every table: in every language's text.
_INTERNATIONAL = _table(
    titles="dr prof vs cf approx ca",
    before_number="no nos nr fig figs vol vols pp p.p tel art ch chap sec",
)

ABBREVIATIONS: dict[str, Abbreviations] = {
    "en": _table(
        titles="mr mrs ms mx messrs dr prof st jr sr rev hon gen col lt sgt capt cmdr gov sen rep pres mt ft",
        before_number=f"pg ed eds ext {_MONTHS_EN}",
        may_end="a.m, p.m",
    ),
    "fr": _table(
        titles="mm mme mmes mlle mlles mgr dr pr me st ste av bd cie",
        before_number="env chap éd",
    ),
    "es": _table(
        titles="sr sra srta sres dr dra dña lic ing arq prof profa ud uds ee uu sto sta ej av avda",
        before_number="pág págs núm cap aprox",
    ),
    "pt": _table(
        titles="sr sra srta dr dra prof profa eng av exa exmo exma sto sta",
        before_number="pág págs núm cap aprox",
    ),
    "it": _table(
        titles="sig sigg dott dott.ssa prof prof.ssa ing avv arch geom on rag mons",
        before_number="pag pagg cap",
    ),
    "de": _table(
        titles="hr fr frl dr prof dipl ing bzw vgl ggf evtl inkl sog mio mrd tsd fa geb gest ehem hl",
        before_number="abs bd jan feb mär apr jun jul aug sep sept okt nov dez",
        suffixes="str",
    ),
    "nl": _table(
        titles="dhr mevr mr dr prof ir ing drs bijv ca st",
        before_number="blz",
    ),
    "pl": _table(
        titles="ul al pl np tzn tj dr prof inż mgr ks św",
        before_number="godz str tys mln mld ok",
    ),
    "cs": _table(
        titles="ing mgr mudr judr phdr rndr bc doc prof ul nám tj např tzv resp popř",
        before_number="str",
    ),
    "tr": _table(
        titles="dr prof doç yrd av müh sn bkz örn cad sok mah",
    ),
    "vi": _table(titles="tp ts gs pgs ths bs ks tt tx"),
    "ms": _table(titles="en pn tn cik dr prof sdn jln kg"),
    "id": _table(titles="bpk sdr sdri dr prof ir jl gg hj kab kec kel"),
    "tl": _table(titles="gng bb dr sto sta gob kgg pang", before_number="blg"),
    "ru": _table(
        titles="ул пр просп пер им проф акад доц см св тов гр млн млрд тыс",
        before_number="стр рис гл ок",
        may_end="т. д, т.д, т. п, т.п, и др",
    ),
    "uk": _table(
        titles="вул пр просп пров ім проф акад доц див св пл обл млн млрд тис",
        before_number="стор рис",
        may_end="т. д, т.д, і т. ін",
    ),
    "kk": _table(titles="көш проф акад млн млрд", may_end="т.б, т.с.с"),
    "mn": _table(titles="проф", may_end="г.м"),
    "ar": _table(before_number="ص ج"),
    "fa": _table(before_number="ص ج"),
    "ur": _table(before_number="ص"),
    "hi": _table(titles=f"डॉ प्रो प्रा स्व पं मो सु कु {_DEVANAGARI_LETTERS}"),
    "mr": _table(titles=f"डॉ प्रो प्रा स्व पं सौ कु {_DEVANAGARI_LETTERS}"),
    "bn": _table(titles="ডা মো মি প্রফ"),
    "gu": _table(titles="ડૉ પ્રો સ્વ"),
    "te": _table(titles="డా ప్రొ శ్రీ"),
    "ta": _table(titles="திரு திருமதி செல்வி பேரா டாக்"),
    "el": _table(titles="κα δρ καθ δηλ", before_number="σελ αρ"),
}

# Words of one letter with its signs that end sentences: the splitter takes any other such word
# before a dot for an initial (पु. ल. देशपांडे, ડૉ.), but "છે." is Gujarati's "is.".
NOT_INITIALS = frozenset("है हैं हो था थी थे छे છે છો હા না".split())

# Ordinary words of one language that another language's table holds.
_NOT_IN_UNION = frozenset({"on", "me", "ir", "en", "sen", "ok", "kg"})

# Languages that write ordinals as a number and a dot ("am 3. Oktober", "2. Dünya Savaşı").
# Their ordinals mostly precede lower-case words (28. října, 16. yüzyılda), which never end a
# sentence anyway; before a capital, an ordinal needs one of ORDINAL_HEADS after it.
ORDINAL_DOT_LANGUAGES = frozenset({"de", "cs", "pl", "tr"})

# Words after "3." that make it an ordinal: months and the nouns that most often follow an
# ordinal number in German and Turkish (used too when the language is not known).
ORDINAL_HEADS = frozenset(
    """
    januar jänner februar märz april mai juni juli august september oktober november dezember
    jahrhundert jahrtausend platz mal stock etage klasse liga runde auflage kapitel weltkrieg
    geburtstag jahrestag bundesliga
    ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık dünya
    """.split()
)

# German capitalises every noun, so any capitalised word after "3." may be its head, except the
# words that start sentences: "Das älteste ist 12. Es geht aufs Gymnasium."
GERMAN_SENTENCE_STARTERS = frozenset(
    """
    der die das den dem des ein eine einer eines einem einen er sie es ich du wir ihr man
    dann danach davor dabei aber und oder doch denn so da hier dort heute morgen gestern jetzt
    nun auch noch nur bitte wer was wie wo wann warum diese dieser dieses mein meine sein seine
    """.split()
)


@cache
def abbreviations_for(language: Language | None) -> Abbreviations:
    """The table for `language`, or the union of all tables when it is not known."""
    if language is not None:
        return _INTERNATIONAL | ABBREVIATIONS.get(language.code, Abbreviations())
    union = _INTERNATIONAL
    for table in ABBREVIATIONS.values():
        union = union | table
    return Abbreviations(union.titles - _NOT_IN_UNION, union.before_number, union.may_end, union.suffixes)
