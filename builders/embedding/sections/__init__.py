"""The fixture sections method families bring (section.py says what one declares), by name.

A family's declaration names its section (protocols/route.py); this table holds each
section's code once. `lab embed build` takes one flag per section, `lab run` asks for the sections
a protocol's methods need, and the evaluator derives the lab's records from whichever sections a
fixture holds (evaluator/inputs.py); none of them names a family.
"""

from __future__ import annotations

from builders.embedding.sections import hipporag2, linearrag
from builders.embedding.sections.section import LabRecords, Section, SectionInputs

SECTIONS: dict[str, Section] = {section.name: section for section in (
    hipporag2.SECTION,
    linearrag.SECTION,
)}

__all__ = ["SECTIONS", "LabRecords", "Section", "SectionInputs"]
