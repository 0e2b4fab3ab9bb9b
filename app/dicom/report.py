"""A DICOM Comprehensive SR per edit (highdicom): the judge's verdict on it and, where a
locked study settled it, the readers' consensus, each referring to the edit's instance.

The concepts are this app's own, under the private coding scheme 99MEDBANANA (a scheme
designator beginning 99 is private by the standard's rule): no standard code says "an image
model's judge accepted this edit"."""

from dataclasses import dataclass

import highdicom as hd
from highdicom.sr import (
    CodedConcept,
    ContainerContentItem,
    ContentSequence,
    ImageContentItem,
    RelationshipTypeValues,
    TextContentItem,
)
from pydicom.dataset import Dataset

from app.dicom.instances import MANUFACTURER

SCHEME = "99MEDBANANA"
ASSESSMENT = CodedConcept("MB0001", SCHEME, "Synthetic image assessment")
JUDGE = CodedConcept("MB0002", SCHEME, "Image model judge verdict")
JUDGE_MODEL = CodedConcept("MB0003", SCHEME, "Judge model")
JUDGE_REASON = CodedConcept("MB0004", SCHEME, "Judge reason")
CONSENSUS = CodedConcept("MB0005", SCHEME, "Readers consensus")
NOTE = CodedConcept("MB0006", SCHEME, "Synthetic image note")
EDIT = CodedConcept("121112", "DCM", "Source of Measurement")
CONTAINS = RelationshipTypeValues.CONTAINS


@dataclass(frozen=True)
class Assessment:
    judge: dict[str, bool | None]  # overall and each dimension; empty when no readable verdict
    judge_model: str
    judge_reason: str
    consensus: dict[str, bool | None]  # empty when no locked study settled the edit

    def lines(self) -> list[tuple[CodedConcept, str]]:
        found = [(NOTE, "This image is synthetic: a generative model edited the referenced "
                        "original. It is not a record of any patient.")]
        if self.judge:
            found += [(JUDGE, _said(self.judge)), (JUDGE_MODEL, self.judge_model or "not recorded")]
            if self.judge_reason:
                found.append((JUDGE_REASON, self.judge_reason[:1000]))
        else:
            found.append((JUDGE, "no readable verdict"))
        found.append((CONSENSUS, _said(self.consensus) if self.consensus
                      else "not settled by the readers of a locked study"))
        return found


def _said(answers: dict[str, bool | None]) -> str:
    word = {True: "pass", False: "fail", None: "unsettled"}
    return "; ".join(f"{question}: {word[value]}" for question, value in answers.items())


# What the report takes from the edit: its identity, patient and study. Handed the whole
# image, highdicom copied its megabyte of pixels too (the report took 10 ms, now 6).
EVIDENCE = ("SOPClassUID", "SOPInstanceUID", "StudyInstanceUID", "SeriesInstanceUID",
            "PatientID", "PatientName", "PatientBirthDate", "PatientSex", "StudyID",
            "StudyDate", "StudyTime", "AccessionNumber", "ReferringPhysicianName")


def _evidence(edit: Dataset) -> Dataset:
    slim = Dataset()
    for keyword in EVIDENCE:
        if keyword in edit:
            setattr(slim, keyword, edit.get(keyword))
    return slim


def assessment_report(edit: Dataset, assessment: Assessment, *, series_uid: str, sop_uid: str,
                      instance_number: int) -> hd.sr.ComprehensiveSR:
    root = ContainerContentItem(name=ASSESSMENT, template_id=None)
    items: list[ImageContentItem | TextContentItem] = [ImageContentItem(
        name=EDIT, referenced_sop_class_uid=edit.SOPClassUID,
        referenced_sop_instance_uid=edit.SOPInstanceUID, relationship_type=CONTAINS)]
    items += [TextContentItem(name=name, value=value, relationship_type=CONTAINS)
              for name, value in assessment.lines()]
    root.ContentSequence = ContentSequence(items)
    report = hd.sr.ComprehensiveSR(
        evidence=[_evidence(edit)], content=root, series_instance_uid=series_uid, series_number=900,
        sop_instance_uid=sop_uid, instance_number=instance_number, manufacturer=MANUFACTURER,
        is_complete=True, is_final=True)
    report.SeriesDescription = "Synthetic image assessment"
    # No Synthetic Data here: the report's content (the verdicts) is a faithful record; the
    # image it refers to says YES itself.
    report.ContentDate, report.ContentTime = edit.ContentDate, edit.ContentTime
    report.InstanceCreationDate, report.InstanceCreationTime = edit.ContentDate, edit.ContentTime
    return report
