"""Text put back into XML the formats rewrite with lxml (.odt, .xlsx, XLIFF): characters XML 1.0 cannot hold
become spaces, and text goes after an element's last child or into its own text."""

from __future__ import annotations

import re

from lxml import etree

NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def append_text(element: etree._Element, text: str) -> None:
    if not text:
        return
    text = NOT_XML.sub(" ", text)
    if len(element):
        element[-1].tail = (element[-1].tail or "") + text
    else:
        element.text = (element.text or "") + text
