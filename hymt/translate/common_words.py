"""Very common words that point to one language within a script, for texts too short for lingua.

Each list holds greetings and function words of one language. A word that is also an
ordinary word of another language of the same script is either left out (English "to" is
Polish and Czech "to"; Spanish "no" is everywhere) or listed under every language it belongs
to, so that it counts for none of them alone ("terima kasih" is Malay and Indonesian, "hallo"
German and Dutch). Words are casefolded; apostrophes are written as "'".
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import regex

#: A Latin-script word (letters, combining marks, inner apostrophes: "don't", "dov'è").
LATIN_WORD = regex.compile(r"\p{Latin}[\p{Latin}\p{M}]*(?:['’]\p{Latin}[\p{Latin}\p{M}]*)*")
#: A Devanagari word (letters with their vowel signs and viramas; the danda ends it).
DEVANAGARI_WORD = regex.compile(r"\p{Devanagari}[\p{Devanagari}\p{M}]*")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


LATIN_WORDS: Mapping[str, frozenset[str]] = {
    "en": _words("the you your yes please thanks thank hello hi hey good morning evening night what where when why "
                 "how who this that with and of are is was were have has don't can't i'm it's what's that's let's it "
                 "for from see later welcome sorry bye goodbye they there here will would can very much about know "
                 "understand"),
    "de": _words("und ist nicht ich du sie wir ihr der das dem ein eine einen mit auf für von zu bei nach auch sehr "
                 "danke bitte hallo tschüss guten morgen tag abend nacht wie wo was warum nein gut schön vielen dank "
                 "bis später wiedersehen haben sind bin kann können gibt im vom zum zur über oder aber noch schon nur"),
    "fr": _words("le les et est je vous nous il elle ils une des au aux avec pour dans sur pas qui quoi où c'est j'ai "
                 "s'il plaît merci bonjour bonsoir salut oui non beaucoup bien très bientôt revoir ça moi toi mais bon "
                 "bonne"),
    "es": _words("el los las y es está estoy por para que qué cómo dónde cuándo muy gracias hola adiós buenos buenas "
                 "días noches tardes señor usted ustedes hasta luego mañana sí también pero yo mi tengo quiero lo la "
                 "del al con sé"),
    "pt": _words("o os uma não sim você vocês eu ele ela obrigado obrigada olá oi tchau bom boa tudo bem muito muita "
                 "também onde fica está estou é são com para por que da dos até"),
    "it": _words("il lo la gli le di che non è sono sei siamo ciao grazie prego buongiorno buonasera buonanotte "
                 "arrivederci sì molto bene dove perché anche questo questa quello con mi ti ho hai presto tutti "
                 "scusi scusa ecco della delle dei nel nella alla"),
    "nl": _words("het een is niet ik jij wij zij van voor maar ook dat er hoe waar wat waarom hallo dank wel bedankt "
                 "alsjeblieft alstublieft goedemorgen goedenavond goed dag doei tot ziens graag zijn heb hebt heeft "
                 "kan geen nog naar uit om aan bij welterusten"),
    "pl": _words("nie jest są się co jak czy dziękuję dzięki cześć dzień dobry dobranoc proszę bardzo gdzie kiedy "
                 "dlaczego jestem mam masz że ale widzenia przepraszam który która też"),
    "cs": _words("jsem jsi jsou není ano co jak ale děkuji díky ahoj dobrý dobrou noc prosím moc velmi kde kdy proč "
                 "shledanou také ten už máte mám vás vám"),
    "tr": _words("bir ve bu şu ben sen biz siz evet hayır değil var yok için çok iyi merhaba selam teşekkür "
                 "teşekkürler ederim günaydın akşamlar lütfen nasıl nasılsın nerede tamam görüşürüz hoşça kal ile"),
    "vi": _words("và của là có không tôi bạn được này những người rất cảm ơn xin chào vâng dạ ạ cho với gì đi đâu "
                 "nào lại hẹn gặp các một trong"),
    "ms": _words("tak boleh awak faham kerana sahaja hendak nak mahu tidak saya terima kasih selamat pagi baik apa "
                 "ini itu dengan ke kita kami anda sila jom encik cik percuma kereta baharu bagus sudah belum lagi "
                 "sampai jumpa"),
    "id": _words("bisa kamu mau nggak enggak gak tidak saya terima kasih selamat pagi baik apa ini itu dengan ke kita "
                 "kami anda silakan ayo banget aja karena mengerti dong sih deh sudah belum lagi sampai jumpa bagus"),
    "tl": _words("ang ng mga po opo oo hindi salamat kumusta ako ikaw siya tayo ito iyan iyon maraming magandang "
                 "umaga hapon gabi paalam saan ano bakit paano lang naman din rin yung natin namin mahal"),
}

# Letters that only one of our Latin-script languages writes (Vietnamese tone letters, Turkish
# dotless i, Polish ogonek letters, Czech carons and rings, German ß and ä, ...); U+0307 is
# what casefolding leaves of Turkish İ.
LATIN_LETTERS: Mapping[str, frozenset[str]] = {
    "vi": frozenset("ơưđ" + "".join(chr(c) for c in range(0x1EA0, 0x1EFA))),
    "tr": frozenset("ığş\u0307"),
    "pl": frozenset("ąęłńśźż"),
    "cs": frozenset("ěřůťďň"),
    "de": frozenset("ßä"),
    "pt": frozenset("ãõ"),
    "es": frozenset("ñ"),
}

DEVANAGARI_WORDS: Mapping[str, frozenset[str]] = {
    "hi": _words("है हैं था थी थे में से को और यह वह ये वे नहीं भी लिए हूँ हूं रहा रही रहे गया गई गए मैं आप आपको आपका "
                 "आपकी क्या कैसे कैसा मुझे मेरा मेरी तुम हम हमें इस उस कि पर कर करना करें करते सकते सकता बहुत अच्छा "
                 "यहाँ वहाँ अब जब तब लेकिन अगर पता"),
    "mr": _words("आहे आहेत आणि नाही नाहीत मी मला माझे माझा माझी तुम्ही तुम्हाला तुमचे तुमचा तुमची आम्ही आपण काय कसे कसा "
                 "कशी कोण कुठे केव्हा पण साठी म्हणून म्हणजे खूप छान आता इथे तिथे येथे तेथे होतो झाले झाला केले केला गेला "
                 "गेले जात येत आले आला हवे मध्ये नाव माहीत माहिती करा करू शकता शकते जर तर नंतर आधी"),
}


def vote(words: Iterable[str], lists: Mapping[str, frozenset[str]]) -> Counter[str]:
    """How many of `words` (casefolded) are common words of each language."""
    hits: Counter[str] = Counter()
    for word in words:
        for code, common in lists.items():
            if word in common:
                hits[code] += 1
    return hits


def letter_vote(words: Iterable[str], letters: Mapping[str, frozenset[str]]) -> Counter[str]:
    """How many of `words` contain a letter that only one language writes, per language."""
    hits: Counter[str] = Counter()
    for word in words:
        for code, own in letters.items():
            if not own.isdisjoint(word):
                hits[code] += 1
    return hits


def leader(votes: Counter[str]) -> str | None:
    """The language with strictly more hits than any other, if any."""
    ranked = votes.most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]
