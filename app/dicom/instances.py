"""One image as a DICOM Secondary Capture instance (highdicom): an original with Synthetic
Data NO, an edit with Synthetic Data YES, Image Type DERIVED\\SECONDARY, Conversion Type SYN,
its instruction in Derivation Description and its original in Source Image Sequence.

The pixels are the stored file's, decoded once: greyscale stays MONOCHROME2 (an edit that
came back as RGB with three equal channels is greyscale too), colour is RGB. Nothing of a
patient is written: the Patient ID is a pseudonym of the source image (uids.py), and the
dates are the run's, not any acquisition's.
"""

import io
from dataclasses import dataclass
from datetime import datetime

import highdicom as hd
import numpy as np
from PIL import Image, JpegImagePlugin
from pydicom.dataset import Dataset
from pydicom.encaps import encapsulate
from pydicom.sr.codedict import codes
from pydicom.uid import JPEGBaseline8Bit
from pydicom.valuerep import DA, TM

from app import __version__
from app.provenance.facts import EditFacts

MANUFACTURER = "MedBanana Review"
# What the body part and the series say, by the app's modality.
BODY_PART = {"chest_xray": "CHEST", "brain_mri": "BRAIN", "fundus": "EYE"}
PAIRED = {"fundus"}  # Laterality is for paired body parts only
MODALITY_NAME = {"chest_xray": "chest X-ray", "brain_mri": "brain MRI", "fundus": "fundus photograph"}
SYNTHETIC_NOTE = ("SYNTHETIC IMAGE made by a generative model from the original referenced; "
                  "not a record of any patient. For research and teaching only.")


class UnreadablePixels(ValueError):
    """The stored file does not decode as an image."""


@dataclass(frozen=True)
class Source:
    key: str  # dataset/category/filename: what every UID and the pseudonym derive from
    modality: str
    study_uid: str
    patient_id: str


def pixels_of(data: bytes) -> tuple[np.ndarray, str]:
    """(pixel array, photometric interpretation) of an image file's bytes."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            if image.mode in ("L", "1", "I", "I;16", "F", "LA"):
                return np.asarray(image.convert("L")), "MONOCHROME2"
            rgb = np.asarray(image.convert("RGB"))
    except (OSError, Image.DecompressionBombError, ValueError) as error:
        raise UnreadablePixels(f"the image does not decode: {error}") from None
    if (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all():
        return np.ascontiguousarray(rgb[..., 0]), "MONOCHROME2"
    return np.ascontiguousarray(rgb), "RGB"


def original_instance(data: bytes, source: Source, *, series_uid: str, sop_uid: str,
                      when: datetime) -> hd.sc.SCImage:
    image = _image(data, source, series_uid=series_uid, sop_uid=sop_uid, series_number=1,
                   instance_number=1, when=when)
    image.SyntheticData = "NO"
    image.ImageType = ["ORIGINAL", "SECONDARY"]
    image.ConversionType = "WSD"  # a workstation's copy of the data set's file
    image.SeriesDescription = f"Original {MODALITY_NAME.get(source.modality, source.modality)}"
    return image


def edit_instance(data: bytes, source: Source, facts: EditFacts, *, original: Dataset,
                  series_uid: str, series_number: int, sop_uid: str,
                  when: datetime) -> hd.sc.SCImage:
    image = _image(data, source, series_uid=series_uid, sop_uid=sop_uid,
                   series_number=series_number, instance_number=facts.round, when=when)
    image.SyntheticData = "YES"
    image.ImageType = ["DERIVED", "SECONDARY"]
    image.ConversionType = "SYN"
    what = "added" if facts.direction == "add" else "removed"
    image.SeriesDescription = f"SYNTHETIC {facts.disease} {what} ({facts.task_key})"[:64]
    image.DerivationDescription = (f"{facts.instruction} [synthetic edit by {facts.model}, "
                                   f"round {facts.round}]")[:1024]
    image.ImageComments = SYNTHETIC_NOTE
    reference = Dataset()
    reference.ReferencedSOPClassUID = original.SOPClassUID
    reference.ReferencedSOPInstanceUID = original.SOPInstanceUID
    reference.PurposeOfReferenceCodeSequence = [_code(codes.DCM.SourceImageForImageProcessingOperation)]
    image.SourceImageSequence = [reference]
    image.DerivationCodeSequence = [_code(codes.DCM.ImageProcessing)]
    return image


def _code(concept: object) -> Dataset:
    return hd.sr.CodedConcept(concept.value, concept.scheme_designator,  # type: ignore[attr-defined]
                              concept.meaning)  # type: ignore[attr-defined]


def _image(data: bytes, source: Source, *, series_uid: str, sop_uid: str, series_number: int,
           instance_number: int, when: datetime) -> hd.sc.SCImage:
    stored = baseline_jpeg(data)
    if stored is not None:  # kept as it is: no second lossy step, and no decoding at all
        rows, columns, photometric = stored
        array = np.zeros((rows, columns) if photometric == "MONOCHROME2" else (rows, columns, 3),
                         dtype=np.uint8)
    else:
        array, photometric = pixels_of(data)
    decoded = "MONOCHROME2" if photometric == "MONOCHROME2" else "RGB"
    image = hd.sc.SCImage(
        pixel_array=array, photometric_interpretation=decoded, bits_allocated=8,
        coordinate_system="PATIENT", study_instance_uid=source.study_uid,
        series_instance_uid=series_uid, series_number=series_number, sop_instance_uid=sop_uid,
        instance_number=instance_number, manufacturer=MANUFACTURER,
        patient_id=source.patient_id, patient_name=f"Pseudonym^{source.patient_id}",
        patient_birth_date=None, patient_sex=None, accession_number=None,
        study_id=source.patient_id[-8:], study_date=when.date(), study_time=when.time(),
        referring_physician_name=None, patient_orientation=("L", "F"),  # emptied below
    )
    if stored is not None:
        image.PixelData = encapsulate([data])
        image.file_meta.TransferSyntaxUID = JPEGBaseline8Bit
        image.PhotometricInterpretation = photometric  # type: ignore[assignment]
        image.LossyImageCompression = "01"  # the file was JPEG before it came here
        image.LossyImageCompressionMethod = "ISO_10918_1"
    image.SoftwareVersions = __version__
    image.ContentDate, image.ContentTime = DA(when.strftime("%Y%m%d")), TM(when.strftime("%H%M%S"))
    image.InstanceCreationDate, image.InstanceCreationTime = image.ContentDate, image.ContentTime
    image.BodyPartExamined = BODY_PART.get(source.modality, "")
    if source.modality in PAIRED:
        image.Laterality = ""  # unknown: the data set's files do not say which eye
    image.PatientOrientation = []  # unknown too (PA or AP is not recorded): present, empty
    image.BurnedInAnnotation = "NO"
    image.PatientIdentityRemoved = "YES"
    image.DeidentificationMethod = "Pseudonymous Patient ID derived from the data set's file name"
    return image


def baseline_jpeg(data: bytes) -> tuple[int, int, str] | None:
    """(rows, columns, photometric interpretation) of an 8-bit baseline JPEG that DICOM can
    hold as it is (JPEG Baseline transfer syntax); None for anything else, which is decoded."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "JPEG" or image.mode not in ("L", "RGB") \
                    or image.info.get("progressive") or image.info.get("progression"):
                return None
            if image.mode == "L":
                return image.height, image.width, "MONOCHROME2"
            if image.info.get("adobe_transform") == 0:  # RGB stored as RGB: not YCbCr
                return None
            # YCbCr as JFIF stores it; subsampled chroma is YBR_FULL_422 (PS3.5 8.2.1).
            subsampled = JpegImagePlugin.get_sampling(image) in (1, 2)
            return image.height, image.width, "YBR_FULL_422" if subsampled else "YBR_FULL"
    except (OSError, Image.DecompressionBombError, ValueError):
        return None
