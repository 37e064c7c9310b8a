"""`source_lang: "auto"` (or left out while several pairs are served): the route for a request whose source
language is detected, per text.

One job goes to one route, so a request's texts vote with their letters: the language detected for the
most characters is the job's, and its confidence is the share of the characters detected as it, weighted
by each text's confidence (texts in another language lower it). Texts with no letters ("2024", "!!") do
not vote. The language then chooses the route as a named `source_lang` would (RouteTable.choose); a
language no served pair translates from is 422 `unsupported_language_pair` naming what was detected.
"""

from __future__ import annotations

from collections import Counter

from shared.errors import UnsupportedLanguagePair, ValidationError
from shared.routing.language_detection import Detection, detect_many
from shared.routing.route_table import RouteTable
from shared.routing.routes import Route

AUTO = "auto"  # the `source_lang` value that asks for detection


def overall(texts: list[str], detections: list[Detection]) -> Detection:
    """The language of the most characters among texts that have letters, and how sure that is."""
    weights: Counter[str] = Counter()
    for text, found in zip(texts, detections):
        if found.language:
            weights[found.language] += len(text)
    if not weights:
        return Detection("", 0.0)
    language = weights.most_common(1)[0][0]
    total = sum(weights.values())
    sure = sum(len(t) * d.confidence for t, d in zip(texts, detections) if d.language == language)
    return Detection(language, sure / total)


def detected_route(
    routes: RouteTable, texts: list[str], target: str | None
) -> tuple[Route, Detection, list[Detection]]:
    """The route for `texts` in their detected language to `target` (None: whichever target a served
    pair from that language has, when there is one), the job's detection, and each text's."""
    per_text = detect_many(texts)
    found = overall(texts, per_text)
    served = ", ".join(sorted(routes.pairs()))
    if not found.language:
        raise UnsupportedLanguagePair(
            f"no language could be detected: the texts have no letters; give source_lang (served pairs: {served})"
        )
    try:
        route = routes.choose(found.language, target)
    except UnsupportedLanguagePair as exc:
        raise UnsupportedLanguagePair(
            f"the texts were detected as {found.language!r} (confidence {found.confidence:.2f}): {exc.message}"
        ) from None
    return route, found, per_text


def choose_route(
    routes: RouteTable, source: str | None, target: str | None, texts: list[str]
) -> tuple[Route, Detection | None]:
    """The route of a request, and its detection when there was one (else None): with `source` "auto"; and
    when `source` is left out while several served pairs fit `target`, where a detected language that a pair
    translates from chooses it (otherwise the default pair, or 422, as without detection). A document job's
    texts come from the document stage, which makes this choice once it has parsed them (document_route)."""
    if source is None and texts and _several_fit(routes, target):
        found = overall(texts, detect_many(texts))
        if found.language and any(p.source == found.language for p in _fitting(routes, target)):
            return routes.choose(found.language, target), found
    if source != AUTO:
        return routes.choose(source, target), None
    if not texts:
        raise ValidationError('source_lang "auto" needs some text to detect its language: there is none')
    route, found, _ = detected_route(routes, texts, target)
    return route, found


def _fitting(routes: RouteTable, target: str | None) -> list:
    return [p for p in routes.pairs().values() if target is None or p.target == target]


def _several_fit(routes: RouteTable, target: str | None) -> bool:
    return len(_fitting(routes, target)) > 1


def document_route(routes: RouteTable, source: str | None, target: str | None) -> Route | None:
    """The route of a document job as it is submitted, or None where its language is to be detected: the
    document stage chooses the route once it has parsed the document (choose_route on its text), with
    `source` "auto", and with `source` left out while several served pairs fit `target` (as for texts). A
    `target` no served pair has is 422 now, not once the document is parsed."""
    if source != AUTO and not (source is None and _several_fit(routes, target)):
        return routes.choose(source, target)
    if not _fitting(routes, target):
        served = ", ".join(sorted(routes.pairs()))
        raise UnsupportedLanguagePair(f"no served pair translates into {target!r} (served pairs: {served})")
    return None
