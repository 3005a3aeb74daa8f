"""FLORES-200 language codes and file layout: which hymt language a FLORES file holds, and
where a split's files lie in a downloaded FLORES directory.

FLORES-200 names each language by ISO 639-3 code and script (`eng_Latn`, `zho_Hans`). Its
release puts one sentence per line in `<split>/<code>.<split>` (`devtest/eng_Latn.devtest`);
the later FLORES+ release names the files `<split>/<split>.<code>` and renames a few languages
(Mandarin `cmn_Hans` / `cmn_Hant`, Filipino `fil_Latn`). Both layouts and both spellings are
accepted (docs/EVAL.md, "FLORES-200 files").
"""
from __future__ import annotations

from pathlib import Path

from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.languages import Language, get_language, supported_codes

#: hymt code -> FLORES codes of that language, the FLORES-200 spelling first.
FLORES_CODES: dict[str, tuple[str, ...]] = {
    "zh": ("zho_Hans", "cmn_Hans"),
    "en": ("eng_Latn",),
    "fr": ("fra_Latn",),
    "pt": ("por_Latn",),
    "es": ("spa_Latn",),
    "ja": ("jpn_Jpan",),
    "tr": ("tur_Latn",),
    "ru": ("rus_Cyrl",),
    "ar": ("arb_Arab",),
    "ko": ("kor_Hang",),
    "th": ("tha_Thai",),
    "it": ("ita_Latn",),
    "de": ("deu_Latn",),
    "vi": ("vie_Latn",),
    "ms": ("zsm_Latn",),
    "id": ("ind_Latn",),
    "tl": ("tgl_Latn", "fil_Latn"),
    "hi": ("hin_Deva",),
    "zh-Hant": ("zho_Hant", "cmn_Hant"),
    "pl": ("pol_Latn",),
    "cs": ("ces_Latn",),
    "nl": ("nld_Latn",),
    "km": ("khm_Khmr",),
    "my": ("mya_Mymr",),
    "fa": ("pes_Arab",),
    "gu": ("guj_Gujr",),
    "ur": ("urd_Arab",),
    "te": ("tel_Telu",),
    "mr": ("mar_Deva",),
    "he": ("heb_Hebr",),
    "bn": ("ben_Beng",),
    "ta": ("tam_Taml",),
    "uk": ("ukr_Cyrl",),
    "bo": ("bod_Tibt",),
    "kk": ("kaz_Cyrl",),
    "mn": ("khk_Cyrl",),
    "ug": ("uig_Arab",),
    "yue": ("yue_Hant",),
}
_BY_FLORES = {name.casefold(): code for code, names in FLORES_CODES.items() for name in names}
SPLITS = ("dev", "devtest")


def flores_language(name: str) -> Language | None:
    """The hymt language of a FLORES code (`eng_Latn` -> en), None for anything else."""
    code = _BY_FLORES.get(name.strip().casefold())
    return get_language(code) if code else None


def eval_language(value: str, option: str) -> Language:
    """A language given on the command line: a hymt code, alias or name, or a FLORES code.

    Raises:
        UnknownLanguageError: naming `option` and listing the valid codes.
    """
    found = flores_language(value)
    if found is not None:
        return found
    field = option.lstrip("-")
    try:
        return get_language(value, field=field)
    except UnknownLanguageError:
        raise UnknownLanguageError(
            f"{option}: unknown language {value!r}; valid: a hymt code ({', '.join(supported_codes())}) "
            f"or its FLORES-200 code (eng_Latn, zho_Hans, ...)",
            field=field,
        ) from None


def language_from_filename(path: Path) -> Language | None:
    """The language a FLORES-style file name carries (`devtest.eng_Latn`, `eng_Latn.devtest`)."""
    for part in path.name.split("."):
        found = flores_language(part)
        if found is not None:
            return found
    return None


def split_file(directory: Path, language: Language, split: str, option: str) -> Path:
    """The file of `language` in a FLORES directory (the dataset root or one split's folder).

    Raises:
        InvalidInputError: no such file; the message lists every path tried.
    """
    if split not in SPLITS:
        raise InvalidInputError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}", field="split")
    if not directory.is_dir():
        raise InvalidInputError(f"--flores {directory} is not a directory", field="flores")
    tried = []
    for name in FLORES_CODES[language.code]:
        for folder in (directory / split, directory):
            for file_name in (f"{name}.{split}", f"{split}.{name}"):
                path = folder / file_name
                if path.is_file():
                    return path
                tried.append(str(path))
    raise InvalidInputError(
        f"{option} {language.code}: no FLORES file for it under {directory}; tried {', '.join(tried)}",
        field=option.lstrip("-"),
    )
