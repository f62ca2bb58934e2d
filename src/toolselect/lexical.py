"""Lexical similarity over tool surfaces: words (tokens, stems), BM25 and TF-IDF cosine — the
offline provider's ranking, tool retrieval's and lint's likely-confusable pairs."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "please",
        "can't",
        "don't",
        "i'm",
        "it's",
        "let's",
        "what's",
        "tell",
        "give",
        "want",
        "need",
        "use",
        "using",
        "used",
        "get",
        "gets",
    ]
)
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+|[a-z]+")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A deliberately light stemmer: plurals and -ing/-ed, enough to join 'forecasts' and 'forecast'."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased stems of the words in text; splits snake_case, camelCase, dotted.names."""
    words = (w.lower() for w in _WORD.findall(text.replace("_", " ").replace(".", " ")))
    return [stem(w) for w in words if w not in STOPWORDS and len(w) > 1]


def tool_text(name: str, description: str, input_schema: Any, name_weight: int = 3) -> list[str]:
    """A tool's words: its name (weighted), description, parameter names, descriptions and enums."""
    tokens = tokenize(name) * name_weight + tokenize(description)
    for param, spec in _properties(input_schema):
        tokens += tokenize(param)
        if isinstance(spec, dict):
            if isinstance(spec.get("description"), str):
                tokens += tokenize(spec["description"])
            for value in spec.get("enum") or []:
                if isinstance(value, str):
                    tokens += tokenize(value)
    return tokens


def _properties(schema: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        yield from schema["properties"].items()


@dataclass(frozen=True)
class BM25:
    """Okapi BM25 over a fixed list of documents (one per tool)."""

    docs: tuple[Counter[str], ...]
    lengths: tuple[int, ...]
    idf: dict[str, float]
    avg_length: float
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def build(cls, documents: Sequence[list[str]], k1: float = 1.2, b: float = 0.75) -> BM25:
        docs = tuple(Counter(d) for d in documents)
        n = len(docs)
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        lengths = tuple(len(d) for d in documents)
        avg = sum(lengths) / n if n else 0.0
        return cls(docs, lengths, idf, avg or 1.0, k1, b)

    def scores(self, query: Iterable[str]) -> list[float]:
        """Each document's score, in order. Only the documents holding a term are visited for it (each
        document's terms are still added in the query's order: the same sums as a walk over every pair)."""
        out = [0.0] * len(self.docs)
        for term in set(query):
            for i, tf in self._postings.get(term, ()):
                out[i] += self.idf[term] * tf * (self.k1 + 1) / (tf + self._norms[i])
        return out

    @functools.cached_property
    def _postings(self) -> dict[str, list[tuple[int, int]]]:
        """Each term's documents and its count in each, made once per index."""
        postings: dict[str, list[tuple[int, int]]] = {}
        for i, doc in enumerate(self.docs):
            for term, tf in doc.items():
                if tf:
                    postings.setdefault(term, []).append((i, tf))
        return postings

    @functools.cached_property
    def _norms(self) -> list[float]:
        return [self.k1 * (1 - self.b + self.b * length / self.avg_length) for length in self.lengths]


def similar_pairs(tools: Sequence[tuple[str, str, Any]]) -> list[tuple[float, str, str]]:
    """Every two tools' lexical similarity, best first: TF-IDF cosine over name, description and
    parameters, so rare shared words ("forecast", "orders") weigh more than common ones ("city")."""
    docs = [Counter(tool_text(name, description, schema, name_weight=2)) for name, description, schema in tools]
    n = len(docs)
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    idf = {w: math.log((1 + n) / (1 + f)) + 1 for w, f in df.items()}
    vectors = [{w: c * idf[w] for w, c in d.items()} for d in docs]
    norms = [math.sqrt(sum(v * v for v in vec.values())) or 1.0 for vec in vectors]
    having: dict[str, list[int]] = {}  # each word → the tools that have it, in order
    for j, vec in enumerate(vectors):
        for w in vec:
            having.setdefault(w, []).append(j)
    pairs = []
    for i in range(n):
        dots: dict[int, float] = {}  # only the tools sharing a word with this one: no pair × word walk
        for w, v in vectors[i].items():  # in this tool's word order, as a dot product over its words adds
            for j in having[w]:
                if j > i:
                    dots[j] = dots.get(j, 0.0) + v * vectors[j][w]
        for j in range(i + 1, n):
            pairs.append((dots.get(j, 0.0) / (norms[i] * norms[j]), tools[i][0], tools[j][0]))
    return sorted(pairs, key=lambda p: (-p[0], p[1], p[2]))
