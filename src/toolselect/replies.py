"""What a reply without a tool call is: it asks the user for what it needs (`clarify`), says it can't
(`unable`), answers (`answer`), or is no reply at all (`empty`) — When2Call's outcomes besides the
call itself. Pure: text in, kind out.

This is the deterministic reading, used when no judge model is configured (docs/golden-set.md says
the rules). In English, German, French and Spanish:

1. **empty**: no letter or digit, or text that is a call written out rather than a reply (JSON,
   `<tool_call>` markup, a code block holding one).
2. **clarify**: a sentence that asks the user for something it needs — a `?` question (or a last
   "which…" sentence without one), a choice ("One-way or return?"), a request ("Tell me the city
   and I'll check."), a lead and a list ("Could you tell me: 1. … 2. …") — that is not a courtesy
   at the end of an answer ("anything else?", "let me know if…"), an offer ("would you like me
   to…"), or a rhetorical question the reply answers itself.
3. **unable**: it says it can't, or has no tool, access or permission, in its first sentences or
   anywhere in a short reply; quoted or drafted text is not its own words.
4. **answer**: anything else.

The rules are measured against labelled replies (tests/data/replies/, docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from .taxonomy import ReplyKind

# an answer stopped by the API is no reply, whatever text it has (BFCL's irrelevance category was
# criticised for counting these as restraint): the stop reasons of Anthropic, Chat Completions, Responses
UNUSABLE = {
    "max_tokens": "the reply was cut at the token limit",
    "length": "the reply was cut at the token limit",
    "incomplete": "the reply is incomplete (cut at the token limit)",
    "refusal": "the API refused to answer",
    "content_filter": "the API's content filter stopped the reply",
}


@dataclass(frozen=True)
class Reply:
    """What a sample without a tool call said: its kind, who read it (the rules here, or the judge
    model), and the judge's own words when it read it."""

    kind: ReplyKind
    by: Literal["rules", "judge"] = "rules"
    said: str = ""


class _Lazy:
    """A pattern compiled when first used: a run that reads no reply compiles none of these (18 ms)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags

    @functools.cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def split(self, text: str) -> list[str]:
        return self.compiled.split(text)

    def sub(self, replacement: str, text: str) -> str:
        return self.compiled.sub(replacement, text)


_WORD = _Lazy(r"[^\W_]")  # a letter or a digit
_NOT_A_REPLY = _Lazy(r"^\s*(?:[{\[]|<\|?(?:tool_call|function|invoke)|```(?:json|xml|python)?\s*[{\[<])", re.IGNORECASE)
# sentences: split after . ! ? (and the Spanish/French spacing) and at line breaks
_SENTENCE = _Lazy(r"(?<=[.!?…])(?<!\d\.)[ \t]+|\s*\n\s*")  # not after a list's "1."
_LIST_ITEM = _Lazy(r"^\s*(?:\d+[.)]|[-*•]|[a-z][.)])\s+", re.IGNORECASE)

_COURTESY = _Lazy(
    r"\b(?:anything else|something else|any other (?:questions?|help|way)|is there (?:anything|something)"
    r"|can i help(?: you)? with|how (?:else )?can i (?:help|assist)|what (?:else )?can i do for you|let me know if"
    r"|feel free|hope (?:this|that) helps|wie kann ich (?:dir|ihnen) helfen|que puis-je faire pour"
    r"|what's on your mind|what is on your mind|how are you|how about you|and you\?|how's your (?:day|week)"
    r"|how is your (?:day|week)|how are things|wie geht's|qué tal|ça va|comment allez-vous"
    r"|when(?:ever)? you(?:'re| are) ready|on the agenda|what are we (?:doing|working on)"
    r"|happy to help|need (?:anything|any) (?:more|else)|want to know (?:anything|more)"
    r"|algo más|otra cosa|en qué (?:más )?(?:puedo|te puedo)|autre chose|quelque chose d'autre|puis-je (?:vous|t')aider"
    r"|n'hésitez pas|sonst noch|noch etwas|kann ich (?:dir|ihnen) (?:sonst|noch)|weitere fragen)\b",
    re.IGNORECASE,
)
_OFFER = _Lazy(  # a question that offers to do something (at its start): not a clarification
    r"^(?:(?:or|alternatively|also|otherwise),?\s+)?(?:would you like me to|do you want me to|want me to|shall i"
    r"|(?:would you like|do you want|want) (?:a|an|some|more|another)\b(?!.*\b(?:or|o|ou|oder)\b)"
    r"|should i|may i|would it help if i|¿?quieres que|¿?le gustaría que|voulez-vous que je|veux-tu que je"
    r"|souhaitez-vous que je|soll ich|möchtest du,? dass ich|möchten sie,? dass ich)\b",
    re.IGNORECASE,
)
_ASKS = _Lazy(
    r"\b(?:could|can|would|will) you\b"
    r"|\bplease (?:tell|let me know|provide|specify|clarify|confirm|share|give|send|indicate|choose|pick|say)"
    r"|\blet me know (?:which|what|where|when|who|how|the|your|if you (?:mean|want|prefer))"
    r"|\bi(?:'ll| will)? need (?:to know|a few|some|more|the following|your|the)"
    r"|\bi need (?:to know|a few|some|more|the following|your|the)|\bneed\s*:|\b(?:just )?need (?:the|your)\b"
    r"|\bnecesito (?:saber|que|conocer|los|la|el)|\bj'ai besoin (?:de savoir|de connaître|du|de la|des)"
    r"|\bich brauche (?:noch )?(?:folgende|ein paar|die|den|das|deine|ihre)|\bil me faut\b|\bme hace falta\b"
    r"|\b(?:which|what|whats|where|when|who|whom|whose|how many|how much|how long|how far)\b"
    r"|\b(?:do|did|are|were|is|was|should|would|could) (?:you|it|this|that|we|they)\b"
    r"|\byour\b|\bdo you mean\b"
    r"|(?:podrías|puedes|podría|puede) (?:decirme|indicarme|especificar|confirmar|darme|proporcionar|aclarar)"
    r"|\bpor favor,? (?:indica|indique|dime|dígame|especifica|proporciona|confirma)"
    r"|(?:cuál|cuáles|qué|dónde|cuándo|cuánto|cuántos|quién)\b"
    r"|\b(?:pourriez|pouvez|pourrais|peux)[- ](?:vous|tu)\b"
    r"|\b(?:merci de|veuillez) (?:préciser|indiquer|me dire|confirmer|fournir)"
    r"|\b(?:quel|quelle|quels|quelles|où|quand|combien|lequel|laquelle)\b"
    r"|\b(?:könnten|können|kannst|könntest|würden|würdest) (?:sie|du)\b"
    r"|\bbitte (?:gib|geben|nenne|nennen|teile|teilen|sag|sagen|bestätige|bestätigen)"
    r"|\b(?:welche[rsnm]?|wo|wann|wie viele|wie viel|wie lange|wohin|meinst du|meinen sie)\b",
    re.IGNORECASE,
)
_REQUEST_LEAD = _Lazy(  # a statement that asks, with or without "?" ("Please provide the city.")
    r"^(?:please|could you|can you|would you|let me know|i need|i'll need|i will need|to (?:check|look|find|get|book)"
    r"|(?:(?:sure|sure thing|ok|okay|thanks[^.!]*)[,!.]?\s+)?(?:before i \w+,?\s+)?(?:i )?(?:just )?need (?:your|the)"
    r"|por favor|necesito|indícame|dime|merci de|veuillez|j'ai besoin|bitte|ich brauche|nenne mir|sag mir)\b",
    re.IGNORECASE,
)
_IMPERATIVE = _Lazy(  # "Tell me the city and I'll check." — a request for what it needs
    r"^(?:(?:ok|okay|sure|sure thing|claro|vale|d'accord|gern|gerne|alles klar|got it)[,!.]?\s+)?"
    r"(?:please\s+|bitte\s+|por favor,?\s+)?(?:tell me|send me|give me|share|need (?:the|your|a|an)|dime|dígame"
    r"|indícame|envíame|mándame"
    r"|pásame|schick mir|sag mir|nenn mir|nenne mir|gib mir|dites-moi|indiquez-moi|envoyez-moi|donne-moi|donnez-moi"
    r"|précisez)\b",
    re.IGNORECASE,
)
_ADDRESSED = _Lazy(r"\b(?:you|your|du|dir|dein|ihr|ihnen|tu|te|vous|votre|usted|tú)\b", re.IGNORECASE)
_WH_START = _Lazy(
    r"^(?:(?:ok|okay|sure|sure thing|got it|great|perfect|d'accord|claro|vale|gut|okay)[,!.]?\s+)?(?:which|what"
    r"|whats|what's|where|when|who|how many|how much|how long|pouvez-vous|pourriez-vous|(?:pour |à |de )?(?:combien"
    r"|quel|quelle|quels|quelles"
    r"|quand|où)|(?:para |a |de |en )?(?:cuál|cuáles|cuándo|dónde|cuántos|cuántas|cuánto|qué)|(?:für |an |um )?"
    r"(?:welche[rsnm]?|wann|wo|wie viele|wie viel))\b",
    re.IGNORECASE,
)
_ANSWER_WORD = _Lazy(  # the sentence after a question answers it: "Yes —", "Not officially."
    r"^(?:yes|no|yep|nope|not (?:officially|really|quite|always)|generally|usually|in short|short answer|it depends"
    r"|absolutely|definitely|sí|oui|non|ja|nein|depende|ça dépend|kommt drauf an)\b",
    re.IGNORECASE,
)
_NEGATED = _Lazy(r"n't\b|\bnot\b|\bnicht\b|\bpas\b|\bno\b", re.IGNORECASE)
_NEEDS = _Lazy(  # a lead of a list of what it needs: "I need a couple of details:"
    r"\b(?:need|needs|require|required|necesito|necesitaría|hace falta|besoin|faut|brauche|benötige|details|datos"
    r"|informations?|información|angaben)\b",
    re.IGNORECASE,
)
_UNABLE = _Lazy(
    r"\b(?:i can(?:no|')t(?! (?:think|wait|believe|imagine|stress|emphasi[sz]e|help but|recommend))|i cannot"
    r"|i(?:'m| am) (?:not able|unable)|i(?:'m| am) afraid i|i won't be able"
    r"|unable to|i (?:do not|don't) have (?:access|the ability|a tool|any tool|tools|the tools|a way|real-time"
    r"|the capability|the means|a function|any function|permission)|i have no (?:way|tool|access|ability|function)"
    r"|no (?:tool|function|capability) (?:available )?(?:for|to|that)|not (?:something|a task) i can"
    r"|(?:beyond|outside(?: of)?) (?:my|the) (?:capabilities|scope|abilities)|isn't something i|is not something i"
    r"|not (?:able|possible) (?:for me )?to|i(?:'m| am) not (?:equipped|designed|set up)|none of (?:my|the) tools"
    r"|no puedo|no tengo (?:acceso|una herramienta|herramientas|la capacidad|forma)|no es posible|no me es posible"
    r"|je ne peux pas|je n'ai pas (?:accès|d'outil|la possibilité|les moyens)|il m'est impossible"
    r"|impossible (?:de|pour moi)|ich kann (?:das |dir |ihnen |dies )?(?:leider )?(?:nicht|keine)"
    r"|ich habe keine?n? (?:zugriff|werkzeug|tool|möglichkeit)|(?:habe|hab) ich (?:leider )?keine?n? (?:zugriff"
    r"|werkzeug|tool|möglichkeit)|\bkann (?:ich )?(?:daher |leider |also )*(?:keine|nicht)\b"
    r"|(?:ist|wäre) (?:mir )?nicht möglich|dazu habe ich keine?|fehlt mir|kann ich (?:so |hier )?nicht"
    r"|no (?:lo |la |te )?puedo|no tengo (?:ninguna |una |el |la )?(?:herramienta|acceso|permiso|forma)"
    r"|outside (?:of )?what i can|(?:isn't|is not|aren't|are not|not) supported|i don'?t have (?:access|permission"
    r"|the rights|rights)|(?:rights|permissions?|access) (?:that )?i (?:don'?t|do not) have|i dont have"
    r"|i cant\b|\bcant do\b|my (?:\w+ )?tools (?:only )?cover|(?:isn't|is not) something (?:my|the) tools?"
    r"|not (?:authori[sz]ed|allowed|permitted) to|outside what i'm allowed|only lets? me|no access to"
    r"|i wish i could|require[sd]? a human|(?:aren't|are not|isn't|is not) (?:among|part of|within) my"
    r"|beyond me|nothing i have|only exposes|read-only|l'autorisation de|pas autorisé|no dispongo|no estoy autorizad"
    r"|mit meinen (?:werkzeugen|tools) nicht|nicht (?:möglich|erlaubt|berechtigt)|\bcan'?t do that\b)",
    re.IGNORECASE,
)


_QUOTED = _Lazy(  # a quote or code it drafts ("here's a polite decline: …"): not its own words
    r"^\s*>.*$|```.*?```|\"[^\"\n]{20,}\"?|“[^”]{20,}”?|«[^»]{20,}»?", re.MULTILINE | re.DOTALL
)
_CHOICE = _Lazy(r"\b(?:or|o|ou|oder)\b", re.IGNORECASE)


def classify(text: str) -> ReplyKind:
    """The kind of a reply that calls no tool, by the rules above."""
    if not _WORD.search(text or "") or _NOT_A_REPLY.match(text):
        return "empty"
    own = _QUOTED.sub(" ", text).strip() or text
    sentences = [s.strip() for s in _SENTENCE.split(own) if s.strip()]
    if _clarifies(sentences):
        return "clarify"
    if any(_UNABLE.search(s) for s in sentences[:3]) or (len(own.split()) < 60 and _UNABLE.search(own)):
        return "unable"
    return "answer"


def _clarifies(sentences: list[str]) -> bool:
    for i, s in enumerate(sentences):
        if _COURTESY.search(s) or (_OFFER.match(s) and not (_CHOICE.search(s) and s.endswith("?"))):
            continue
        last = i == len(sentences) - 1
        asked = s.endswith("?") or s.startswith("¿") or (last and s[-1:] not in ".!:" and bool(_WH_START.match(s)))
        plain_wh = bool(_WH_START.match(s)) and not _NEGATED.search(s)  # "Which document?" asks
        answered = any(len(x.split()) >= 6 for x in sentences[i + 1 :])
        following = " ".join(sentences[i + 1 : i + 2]).split()
        said_back = any(_ANSWER_WORD.match(w.strip(",;—-")) for w in following[:6])  # "For most trips, yes — …"
        rhetorical = said_back or (_NEGATED.search(s) and not _ADDRESSED.search(s) and not plain_wh)
        if asked and answered and rhetorical:
            continue  # "Who doesn't love a croissant? If you're in Paris, …": a rhetorical question, answered
        if _IMPERATIVE.match(s) and not _UNABLE.search(s):
            return True
        led = s.endswith(":") and any(_LIST_ITEM.match(x) for x in sentences[i + 1 : i + 3])
        if led and _NEEDS.search(s) and not _UNABLE.search(s):
            return True
        if (asked or led) and (_ASKS.search(s) or (asked and _CHOICE.search(s))):  # "One-way or return?"
            return True
        if _REQUEST_LEAD.match(s) and _ASKS.search(s) and not _UNABLE.search(s):
            return True
        if asked and _LIST_ITEM.match(s):  # a list item that is itself a question
            return True
    return False
