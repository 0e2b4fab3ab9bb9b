"""Words that change with a count, for every page and report alike."""


def plural(word: str, n: object) -> str:
    """"case" | plural(1) is "case", | plural(3) is "cases": never "1 cases read"."""
    return word if n == 1 else word + "s"


def spaced(value: str) -> str:
    """A vocabulary value as words: "chest_xray" reads "chest xray"."""
    return value.replace("_", " ")
