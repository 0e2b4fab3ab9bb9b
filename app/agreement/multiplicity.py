"""One primary question; the others are secondary, and their p-values are Holm-adjusted
(statsmodels' ``multipletests``) so that the report controls the family-wise error rate."""

from statsmodels.stats.multitest import multipletests


def holm_adjusted(p_values: dict[str, float | None]) -> dict[str, float | None]:
    """Adjusted p per question; a question with no test (no discordant case) stays None."""
    tested = {q: p for q, p in p_values.items() if p is not None}
    adjusted: dict[str, float | None] = dict.fromkeys(p_values)
    if tested:
        _, corrected, _, _ = multipletests(list(tested.values()), method="holm")
        adjusted.update({q: float(p) for q, p in zip(tested, corrected, strict=True)})
    return adjusted
