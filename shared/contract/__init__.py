"""The public HTTP contract, once: pydantic models of every request and response body.

Requests are validated with them (api.validation), responses built from them (shared.contract.job_view, the
routes), and /openapi.json is generated from them (api.openapi). A new field is one line in its model.
"""

from shared.contract.fidelity_views import Fidelity, QualityGate, SentenceFidelity
from shared.contract.fields import NOT_BLANK
from shared.contract.refusals import refusal
from shared.contract.requests import (
    FORM_FIELDS_BYTES,
    Body,
    DetectRequest,
    DocumentForm,
    DocumentOptions,
    JobRequest,
    Languages,
    LegacyRequest,
    Texts,
    TranslateRequest,
)
from shared.contract.stored_bodies import GlossaryBody
from shared.contract.views import (
    CallbackDelivery,
    Confidence,
    Detection,
    Detections,
    DocumentLink,
    ErrorBody,
    ErrorDetail,
    Glossaries,
    Glossary,
    GlossarySummary,
    Health,
    JobResult,
    JobView,
    LanguagePair,
    LegacyTranslation,
    Progress,
    Readiness,
    ServedLanguages,
    Translations,
    Usage,
)

__all__ = [
    "Body",
    "CallbackDelivery",
    "Confidence",
    "Fidelity",
    "QualityGate",
    "SentenceFidelity",
    "DetectRequest",
    "Detection",
    "Detections",
    "FORM_FIELDS_BYTES",
    "NOT_BLANK",
    "DocumentForm",
    "DocumentOptions",
    "DocumentLink",
    "ErrorBody",
    "ErrorDetail",
    "Glossaries",
    "Glossary",
    "GlossaryBody",
    "GlossarySummary",
    "Health",
    "JobRequest",
    "JobResult",
    "JobView",
    "LanguagePair",
    "Languages",
    "LegacyRequest",
    "LegacyTranslation",
    "Progress",
    "Readiness",
    "ServedLanguages",
    "Texts",
    "TranslateRequest",
    "Translations",
    "Usage",
    "refusal",
]
