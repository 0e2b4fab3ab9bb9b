"""Facet counts from cube rows: each facet ignores its own choice, and only its own."""

from app.cases.facets import facet_counts, id_span, total
from app.cases.filters import CaseFilter

# (modality, disease, direction, outcome, rounds, failed_mask, count, lowest id, highest id)
ROWS = [
    ("fundus", "AMD", "add", "success", 1, 0, 5, 40, 60),
    ("fundus", "AMD", "remove", "failed", 5, 1 | 4, 2, 61, 62),
    ("chest_xray", "Edema", "add", "success", 2, 2, 3, 1, 30),
    ("chest_xray", "Edema", "remove", "api_failed", 0, 0, 1, 35, 35),
]


def counts(case_filter: CaseFilter, facet: str) -> dict[str, int]:
    return {v.value: v.count for v in facet_counts(ROWS, case_filter)[facet]}


def test_no_filter_counts_everything() -> None:
    empty = CaseFilter()
    assert total(ROWS, empty) == 11
    assert counts(empty, "modality") == {"chest_xray": 4, "fundus": 7}
    assert counts(empty, "failed_dimension") == {"compliance": 2, "realism": 2, "structure": 3}
    assert counts(empty, "rounds") == {"0": 1, "1": 5, "2": 3, "5": 2}


def test_a_facet_ignores_its_own_choice_but_not_the_others() -> None:
    chosen = CaseFilter(modality=("fundus",), direction=("add",))
    assert total(ROWS, chosen) == 5
    assert counts(chosen, "modality") == {"chest_xray": 3, "fundus": 5}  # direction still applies
    assert counts(chosen, "direction") == {"add": 5, "remove": 2}  # modality still applies
    assert counts(chosen, "outcome") == {"success": 5}


def test_failed_dimension_values_are_alternatives() -> None:
    chosen = CaseFilter(failed_dimension=("structure", "realism"))
    assert total(ROWS, chosen) == 5
    assert counts(chosen, "modality") == {"chest_xray": 3, "fundus": 2}


def test_a_chosen_value_with_no_cases_is_still_listed() -> None:
    chosen = CaseFilter(disease=("Pneumothorax",))
    assert total(ROWS, chosen) == 0
    assert counts(chosen, "disease")["Pneumothorax"] == 0
    assert [v.selected for v in facet_counts(ROWS, chosen)["disease"]
            if v.value == "Pneumothorax"] == [True]


def test_the_id_span_covers_exactly_the_selected_rows() -> None:
    assert id_span(ROWS, CaseFilter()) == (1, 62)
    assert id_span(ROWS, CaseFilter(modality=("fundus",))) == (40, 62)
    assert id_span(ROWS, CaseFilter(direction=("remove",))) == (35, 62)
    assert id_span(ROWS, CaseFilter(failed_dimension=("structure",))) == (1, 30)
    low, high = id_span(ROWS, CaseFilter(disease=("Pneumothorax",)))
    assert low > high  # nothing selected: an empty span, so a page reads no task
