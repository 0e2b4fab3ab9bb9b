"""The report's description of the study's case filter."""

from app.agreement.standalone import describe_filter


def test_the_filter_in_words_with_metric_bounds() -> None:
    """A numeric bound once raised a TypeError (the report was a 500)."""
    recorded = {"modality": ["chest_xray"], "disease": [], "q": "", "changed_min": 20.0,
                "regions_min": 0, "ssim_outside_max": None, "sort": "changed"}
    assert describe_filter(recorded) == "modality chest_xray; changed min 20.0; regions min 0"
    assert describe_filter({"modality": [], "q": "", "sort": ""}) == "all cases"
